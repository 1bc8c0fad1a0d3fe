"""Transient cgroup v2 scopes: no process Nerve starts outlives it, even one that calls ``setsid``.

A process group ends where a command calls ``setsid`` (``setsid sleep 100 &``, ``set -m``,
``timeout N cmd &``, a daemonising server). A cgroup does not: every descendant stays in it
unless it is moved out by someone allowed to write the cgroup tree. So, where the cgroup v2
tree of this process is writable (root, or a delegated systemd scope), each Bash command,
background task, hook and ``!`` command gets a child cgroup of its own, under one directory per
Nerve process::

    <cgroup2 mount>/<our cgroup>/nerve.<owner lease name>/<kind>-<n>

The child joins its scope itself, before anything else runs (:meth:`Scope.wrap_argv`: a
``builtin echo 0 > cgroup.procs`` prefix to ``bash -c``, or a ``sh -c`` wrapper), which costs no
extra process for bash and never needs ``preexec_fn`` (a fork of the whole interpreter).
A scope is killed (``cgroup.kill``, or SIGKILL to each member on kernels before 5.14) when its
command ends — foreground commands, ``!`` commands and stopped tasks — or, for hooks, whose
detached children may keep running, when the session closes (``reaper.close_scopes``; also
:func:`close_scopes_now` ``atexit``). The directory is recorded in the reaper's lease, so after a crash the next Nerve
start kills and removes it (``tools.process.reaper``).

Where the tree is not writable (a plain ssh session on systemd, a container without cgroup
delegation) :func:`containment` says why, and Nerve falls back to process groups plus the owner
marker: escapees are found by their ``NERVE_OWNER_*`` environment at exit and at the next start.
``systemd-run --user --scope`` is not used: it costs a D-Bus round trip per command.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import os
import signal
import threading
import time
from pathlib import Path

from tools.records import datarecord

__all__ = [
    "Containment",
    "Scope",
    "close_scopes_now",
    "containment",
    "kill_cgroup_tree",
    "new_scope",
    "reset_containment",
]

_log = logging.getLogger(__name__)
_POLL_S = 0.004
_WAIT_S = 1.0


@datarecord(frozen=True, slots=True)
class Containment:
    """How this process contains its children: ``root`` is our scope directory, or None and
    ``reason`` says why only process groups are used."""

    root: Path | None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.root is not None

    def describe(self) -> str:
        if self.root is not None:
            return f"cgroup v2 scopes under {self.root.parent}"
        return (
            f"process groups only ({self.reason}): a command that leaves its process group is "
            "found by its owner marker at exit and at the next start"
        )


def _own_cgroup() -> tuple[Path | None, str]:
    """``<cgroup2 mount>/<our cgroup path>``, or None and why not."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None, "no /proc/self/cgroup"
    rel = next((line[3:] for line in lines if line.startswith("0::")), None)
    if rel is None:
        return None, "no cgroup v2 hierarchy"
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None, "no /proc/self/mountinfo"
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if right.split()[:1] != ["cgroup2"] or len(fields) < 5:
            continue
        root, point = fields[3], fields[4].replace("\\040", " ")
        if root != "/" and not rel.startswith(root):
            continue
        tail = rel[len(root) :] if root != "/" else rel
        return Path(point) / tail.lstrip("/"), ""
    return None, "cgroup v2 is not mounted"


_STATE: Containment | None = None
_LOCK = threading.Lock()
_SCOPES: set[Scope] = set()
_COUNTER = itertools.count(1)


def _detect() -> Containment:
    from tools.process.owners import note_scope_root, self_owner

    base, why = _own_cgroup()
    if base is None:
        return Containment(None, why)
    me = self_owner()
    if me is None:
        return Containment(None, "no process identity")
    if not (os.access(base, os.W_OK) and os.access(base / "cgroup.procs", os.W_OK)):
        return Containment(None, f"{base} is not writable")
    root = base / f"nerve.{me.lease_name}"
    try:
        root.mkdir(exist_ok=True)
    except OSError as exc:
        return Containment(None, f"cannot create {root}: {exc.strerror}")
    note_scope_root(root)
    atexit.register(close_scopes_now)
    return Containment(root)


def containment() -> Containment:
    """This process's containment (detected once, on first use)."""
    global _STATE
    with _LOCK:
        if _STATE is None or (_STATE.root is not None and not _STATE.root.is_dir()):
            _STATE = _detect()
        return _STATE


def reset_containment() -> None:
    """Forget the detection (tests; a forked child is another owner)."""
    global _STATE
    with _LOCK:
        _STATE = None


def _members(path: Path) -> list[int]:
    pids: list[int] = []
    for procs in [path / "cgroup.procs", *path.glob("*/cgroup.procs")]:
        with contextlib.suppress(OSError, ValueError):
            pids += [int(p) for p in procs.read_text().split()]
    return pids


def _populated(path: Path) -> bool:
    try:
        return "populated 1" in (path / "cgroup.events").read_text()
    except OSError:
        return False


def _signal_tree(path: Path) -> None:
    try:
        (path / "cgroup.kill").write_text("1")
        return
    except OSError:
        pass  # before Linux 5.14: one member at a time (a few rounds catch fresh forks)
    for _ in range(3):
        pids = _members(path)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _rmdir_tree(path: Path) -> bool:
    with contextlib.suppress(OSError):
        for child in path.iterdir():
            if child.is_dir():
                with contextlib.suppress(OSError):
                    child.rmdir()
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def kill_cgroup_tree(path: Path, wait_s: float = _WAIT_S) -> bool:
    """SIGKILL everything in ``path`` (and below), wait until it is empty, remove the
    directories. Synchronous; True when nothing is left. Never raises."""
    try:
        if _populated(path) or _members(path):
            _signal_tree(path)
            deadline = time.monotonic() + wait_s
            while _populated(path) and time.monotonic() < deadline:
                time.sleep(_POLL_S)
        return _rmdir_tree(path)
    except Exception:  # containment must never take a command down
        _log.warning("could not end cgroup %s", path, exc_info=True)
        return False


class Scope:
    """One transient cgroup for one command (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def procs(self) -> str:
        return str(self.path / "cgroup.procs")

    def script_prefix(self) -> str:
        """A first line for a ``bash -c`` script that moves the shell into the scope."""
        return f"builtin echo 0 >{_quote(self.procs)} 2>/dev/null\n"

    def wrap_argv(self, argv: list[str]) -> list[str]:
        """``argv`` so that the process joins this scope before it runs anything."""
        if len(argv) >= 3 and os.path.basename(argv[0]) == "bash" and argv[1] == "-c":
            return [argv[0], "-c", self.script_prefix() + argv[2], *argv[3:]]
        return ["/bin/sh", "-c", 'echo 0 >"$0" 2>/dev/null; exec "$@"', self.procs, *argv]

    def populated(self) -> bool:
        return _populated(self.path)

    async def end(self, *, keep_if_populated: bool = False) -> None:
        """Kill what is left in the scope and remove it — unless ``keep_if_populated`` and
        something still runs (a hook's detached job): then it waits for session close."""
        if keep_if_populated and self.populated():
            return
        try:
            self.path.rmdir()  # the common case: nothing left, one syscall
        except OSError:
            import asyncio

            await asyncio.to_thread(self._end_now)
        else:
            with _LOCK:
                _SCOPES.discard(self)

    def _end_now(self) -> None:
        if kill_cgroup_tree(self.path):
            with _LOCK:
                _SCOPES.discard(self)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def new_scope(kind: str) -> Scope | None:
    """A fresh scope for one command, or None where only process groups are available."""
    state = containment()
    if state.root is None:
        return None
    path = state.root / f"{kind}-{next(_COUNTER)}"
    try:
        path.mkdir()
    except OSError as exc:
        _log.info("no cgroup scope for a %s: %s", kind, exc)
        return None
    scope = Scope(path)
    with _LOCK:
        _SCOPES.add(scope)
    return scope


def close_scopes_now() -> None:
    """Kill every scope this process still holds and remove its directory (synchronous)."""
    with _LOCK:
        scopes = list(_SCOPES)
        _SCOPES.clear()
        root = _STATE.root if _STATE is not None else None
    for scope in scopes:
        kill_cgroup_tree(scope.path)
    if root is not None and root.is_dir():
        kill_cgroup_tree(root)
