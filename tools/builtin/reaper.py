"""Kill what a dead Nerve left running: the process groups of its Bash commands.

Nothing runs when Nerve is SIGKILLed, so its commands' groups (a foreground ``sleep 30``, a
background dev server) live on. The next Nerve start calls :func:`start_reaper` to end them.
A group is known to be ours twice over:

* **Lease.** Each spawn appends its pgid to a lease file named after the owner's identity
  (boot id, pid namespace, pid, start time) in ``<data dir>/owners/``. Only groups listed in
  the lease of a dead owner (pid gone, a zombie, or reused: other start time) are candidates.
  A lease is deleted once nothing of its groups is left; live owners' leases are not touched.
* **Marker.** Each spawn gets ``NERVE_OWNER_PID`` / ``NERVE_OWNER_START`` in its environment,
  which children inherit. A listed group is killed (SIGTERM, grace, SIGKILL) only if it is a
  session-leader group (``sid == pgid``, as ``start_new_session`` makes it) and every live
  member carries the dead owner's marker or descends from one that does. A group that also
  holds an unproven process is not killed as a group: only its proven members are, one by one,
  each start time re-checked first. Our own group and our ancestors' are never touched.

Unlike a scan for markers alone, the lease leaves deliberate escapees alone (a ``tmux`` or
``setsid`` daemon started by a command survives a clean exit, so it survives a crash too),
makes a stray marker harmless, and lets a start with no dead lease skip ``/proc`` entirely.

Limits: Linux only (no ``/proc``: a no-op); a process that scrubs its environment and loses
its marked parent is not proven ours; a crash between spawn and lease write loses that group;
leases are per data dir (``NERVE_DATA_DIR`` separates them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OWNER_PID_ENV",
    "OWNER_START_ENV",
    "Owner",
    "ProcInfo",
    "lease_dir",
    "note_group",
    "owner_env",
    "read_stat",
    "reap_orphans",
    "self_owner",
    "start_reaper",
]

OWNER_PID_ENV = "NERVE_OWNER_PID"
OWNER_START_ENV = "NERVE_OWNER_START"
GRACE_S = 0.5  # between SIGTERM and SIGKILL
_POLL_S = 0.02
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Owner:
    """A process identity that survives pid reuse: pid plus start time, in one boot and pid ns."""

    boot: str
    pidns: str
    pid: int
    start: int

    @property
    def lease_name(self) -> str:
        return f"{self.boot}.{self.pidns}.{self.pid}.{self.start}"

    @classmethod
    def from_lease_name(cls, name: str) -> Owner | None:
        parts = name.split(".")
        if len(parts) != 4 or not (parts[2].isdigit() and parts[3].isdigit()):
            return None
        return cls(parts[0], parts[1], int(parts[2]), int(parts[3]))


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """The ``/proc/<pid>/stat`` fields the reaper needs."""

    pid: int
    state: str
    ppid: int
    pgrp: int
    sid: int
    start: int

    @property
    def live(self) -> bool:
        return self.state not in ("Z", "X")


def read_stat(pid: int) -> ProcInfo | None:
    """Parse ``/proc/<pid>/stat``; None if the process is gone or the file is odd."""
    try:
        raw = _read_bytes(f"/proc/{pid}/stat")
        # The command name may hold spaces and ')': the fields start after the last ')'.
        rest = raw[raw.rfind(b")") + 2 :].split(b" ", 20)
        return ProcInfo(
            pid, rest[0].decode(), int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19])
        )
    except (OSError, IndexError, ValueError):
        return None


def _read_bytes(path: str) -> bytes:
    """One file of ``/proc``; ``os.open``/``os.read`` cost half of ``open()`` here."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = [os.read(fd, 65536)]
        while chunks[-1]:
            chunks.append(os.read(fd, 65536))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _pidns() -> str:
    with contextlib.suppress(OSError):  # the link reads "pid:[4026531836]"
        return "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit()) or "0"
    return "0"


_SELF: Owner | None = None


def self_owner() -> Owner | None:
    """This process's identity (cached); None where there is no ``/proc``."""
    global _SELF
    if _SELF is None:
        me = read_stat(os.getpid())
        if me is None:
            return None
        try:
            boot = _read_bytes("/proc/sys/kernel/random/boot_id").decode().strip()
        except (OSError, UnicodeDecodeError):
            boot = ""
        boot = boot.replace("-", "") or "noboot"
        _SELF = Owner(boot, _pidns(), me.pid, me.start)
    return _SELF if _SELF.pid == os.getpid() else None  # a forked child is not the owner


def lease_dir() -> Path:
    """``<data dir>/owners``: ``$NERVE_DATA_DIR`` or the platform user data dir."""
    base = os.environ.get("NERVE_DATA_DIR")
    if base:
        return Path(base) / "owners"
    import platformdirs

    return Path(platformdirs.user_data_dir("nerve", appauthor=False)) / "owners"


def owner_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: ours) plus this process's owner markers, for a spawn."""
    out = dict(os.environ if env is None else env)
    me = self_owner()
    if me is not None:
        out[OWNER_PID_ENV] = str(me.pid)
        out[OWNER_START_ENV] = str(me.start)
    return out


def note_group(pgid: int, directory: Path | None = None) -> None:
    """Record a spawned group in our lease. Never raises: a failure only weakens the reaper."""
    me = self_owner()
    if me is None:
        return
    try:
        d = directory or lease_dir()
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(d / me.lease_name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, f"{pgid}\n".encode())
        finally:
            os.close(fd)
    except OSError as exc:
        _log.warning("could not record process group %s for the reaper: %s", pgid, exc)


def _scan() -> dict[int, ProcInfo]:
    table: dict[int, ProcInfo] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = read_stat(int(entry))
            if info is not None:
                table[info.pid] = info
    return table


def _marker(pid: int) -> tuple[int, int] | None:
    """The (owner pid, owner start) a process carries in its environment, if any."""
    try:
        environ = _read_bytes(f"/proc/{pid}/environ")
    except OSError:
        return None
    if OWNER_PID_ENV.encode() not in environ:
        return None
    found: dict[str, bytes] = {}
    for item in environ.split(b"\0"):
        key, _, value = item.partition(b"=")
        if key.startswith(b"NERVE_OWNER_"):
            found[key.decode(errors="replace")] = value
    try:
        return int(found[OWNER_PID_ENV]), int(found[OWNER_START_ENV])
    except (KeyError, ValueError):
        return None


def _alive(owner: Owner) -> bool:
    info = read_stat(owner.pid)
    return info is not None and info.live and info.start == owner.start


def _ancestors(pid: int, table: Mapping[int, ProcInfo]) -> set[int]:
    out: set[int] = set()
    while pid > 1 and pid not in out:
        out.add(pid)
        info = table.get(pid)
        if info is None:
            break
        pid = info.ppid
    return out


Proven = frozenset[tuple[int, int]]  # (pid, start) of processes already proven ours


@dataclass(frozen=True, slots=True)
class _Plan:
    groups: tuple[int, ...]  # killed as a group (killpg)
    singles: tuple[tuple[int, int, int], ...]  # (pid, start, pgid): proven members of mixed groups
    proven: Proven

    @property
    def pgids(self) -> set[int]:
        return {*self.groups, *(pg for _, _, pg in self.singles)}


def _plan(
    candidates: Mapping[int, tuple[int, int]],
    table: Mapping[int, ProcInfo],
    protected: set[int],
    known: Proven = frozenset(),
) -> _Plan:
    """What to signal now. ``candidates``: pgid -> the dead owner (pid, start) that listed it.

    ``known`` carries the proof of an earlier round: a child whose marked parent has died
    since (reparented, so no longer a visible descendant) is still ours.
    """
    members: dict[int, list[ProcInfo]] = {}
    for info in table.values():
        if info.live and info.pgrp in candidates:
            members.setdefault(info.pgrp, []).append(info)
    groups: list[int] = []
    singles: list[tuple[int, int, int]] = []
    proven_all: set[tuple[int, int]] = set()
    for pgid, procs in members.items():
        if pgid in protected or any(p.pid in protected or p.sid != pgid for p in procs):
            continue
        owner = candidates[pgid]
        roots = {p.pid for p in procs if (p.pid, p.start) in known or _marker(p.pid) == owner}
        if not roots:
            continue  # the pgid was reused by something that is not ours
        proven = [p for p in procs if p.pid in roots or _ancestors(p.ppid, table) & roots]
        proven_all.update((p.pid, p.start) for p in proven)
        if len(proven) == len(procs):
            groups.append(pgid)
        else:
            singles.extend((p.pid, p.start, pgid) for p in proven)
    return _Plan(tuple(sorted(groups)), tuple(singles), frozenset(proven_all))


def _signal(plan: _Plan, sig: int) -> None:
    for pgid in plan.groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid, start, _ in plan.singles:
        info = read_stat(pid)
        if info is not None and info.start == start:  # still the process we proved ours
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, but is not ours to signal
    return True


def _read_lease(path: Path) -> set[int]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return set()
    return {int(line) for line in text.split() if line.isdigit() and int(line) > 1}


def _dead_leases(directory: Path, me: Owner, exclude_pid: int) -> dict[Path, Owner]:
    try:
        names = os.listdir(directory)
    except OSError:
        return {}
    dead: dict[Path, Owner] = {}
    for name in names:
        owner = Owner.from_lease_name(name)
        if owner is None:
            continue
        path = directory / name
        if owner.boot != me.boot:
            with contextlib.suppress(OSError):
                path.unlink()  # a previous boot: every process it named is gone
            continue
        if owner.pidns != me.pidns or owner.pid in (me.pid, exclude_pid):
            continue  # another pid namespace cannot be judged from here; us: alive
        if not _alive(owner):
            dead[path] = owner
    return dead


def reap_orphans(
    *, exclude_pid: int | None = None, directory: Path | None = None, grace_s: float = GRACE_S
) -> list[int]:
    """Kill the leftover process groups of dead Nerve processes; return the pgids signalled.

    ``exclude_pid`` (default: this process) is treated as a live owner and, with its group
    and ancestors, is never signalled. Never raises; a no-op without ``/proc``.
    """
    try:
        return _reap(os.getpid() if exclude_pid is None else exclude_pid, directory, grace_s)
    except Exception:  # the reaper must never take a session down
        _log.warning("reaping orphaned process groups failed", exc_info=True)
        return []


def _reap(exclude_pid: int, directory: Path | None, grace_s: float) -> list[int]:
    me = self_owner()
    if me is None or not os.path.isdir("/proc"):
        return []
    directory = directory or lease_dir()
    dead = _dead_leases(directory, me, exclude_pid)
    candidates: dict[int, tuple[int, int]] = {}
    for path, owner in dead.items():
        pgids = {pg for pg in _read_lease(path) if _group_exists(pg)}
        if not pgids:
            with contextlib.suppress(OSError):
                path.unlink()  # nothing of it is left
        for pg in pgids:
            candidates[pg] = (owner.pid, owner.start)
    if not candidates:
        return []
    table = _scan()
    protected = {os.getpgid(0), *_ancestors(exclude_pid, table), *_ancestors(os.getpid(), table)}
    protected |= {table[p].pgrp for p in list(protected) if p in table}
    plan = _plan(candidates, table, protected)
    kept = _plan(candidates, table, set()).pgids - plan.pgids  # ours, but protected: not now
    signalled = sorted(plan.pgids)
    if signalled:
        _log.info("ending orphaned process groups of dead Nerve processes: %s", signalled)
        known = plan.proven
        _signal(plan, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while plan.groups or plan.singles:
            time.sleep(_POLL_S)
            plan = _plan(candidates, _scan(), protected, known)
            if time.monotonic() >= deadline:
                _signal(plan, signal.SIGKILL)
                break  # the lease stays: the next start checks the SIGKILLed groups are gone
    _forget_finished(dead, candidates, plan.pgids | kept)
    return signalled


def _forget_finished(
    dead: Mapping[Path, Owner], candidates: Mapping[int, tuple[int, int]], left: set[int]
) -> None:
    """Delete each dead owner's lease unless one of its groups (``left``) may still be ours."""
    for path, owner in dead.items():
        if not any(candidates.get(pg) == (owner.pid, owner.start) for pg in left):
            with contextlib.suppress(OSError):
                path.unlink()


def start_reaper(directory: Path | None = None) -> threading.Thread | None:
    """Run :func:`reap_orphans` once in a daemon thread (start-up does not wait for it)."""
    if not os.path.isdir("/proc"):
        return None
    directory = directory or lease_dir()  # resolved now: the environment may change later
    thread = threading.Thread(
        target=reap_orphans, kwargs={"directory": directory}, name="nerve-reaper", daemon=True
    )
    thread.start()
    return thread
