"""Who started a process: owner identities, the markers children inherit, and the leases.

Each spawn of a Bash command, background task, hook or ripgrep carries ``NERVE_OWNER_PID`` /
``NERVE_OWNER_START`` in its environment (children inherit it) and is recorded in a lease file
named after the owner's identity (boot id, pid namespace, pid, start time) in
``<data dir>/owners/``. The reaper (``tools.process.reaper``) reads both after a crash; a clean
exit deletes the lease (:func:`forget_own_lease`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from tools.records import datarecord

__all__ = [
    "OWNER_PID_ENV",
    "OWNER_START_ENV",
    "Owner",
    "ProcInfo",
    "ancestors",
    "forget_own_lease",
    "lease_dir",
    "marker",
    "note_group",
    "note_scope_root",
    "owner_env",
    "read_bytes",
    "read_stat",
    "scan_procs",
    "self_owner",
]

OWNER_PID_ENV = "NERVE_OWNER_PID"
OWNER_START_ENV = "NERVE_OWNER_START"
_log = logging.getLogger(__name__)


@datarecord(frozen=True, slots=True)
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


@datarecord(frozen=True, slots=True)
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
        raw = read_bytes(f"/proc/{pid}/stat")
        # The command name may hold spaces and ')': the fields start after the last ')'.
        rest = raw[raw.rfind(b")") + 2 :].split(b" ", 20)
        return ProcInfo(
            pid, rest[0].decode(), int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19])
        )
    except (OSError, IndexError, ValueError):
        return None


def read_bytes(path: str) -> bytes:
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
            boot = read_bytes("/proc/sys/kernel/random/boot_id").decode().strip()
        except (OSError, UnicodeDecodeError):
            boot = ""
        boot = boot.replace("-", "") or "noboot"
        _SELF = Owner(boot, _pidns(), me.pid, me.start)
    return _SELF if _SELF.pid == os.getpid() else None  # a forked child is not the owner


def forget_own_lease(directory: Path | None = None) -> None:
    """A clean exit: nothing of ours is left, so the next start has no lease to check."""
    me = self_owner()
    if me is not None:
        with contextlib.suppress(OSError):
            ((directory or lease_dir()) / me.lease_name).unlink()


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


def note_scope_root(root: Path, directory: Path | None = None) -> None:
    """Record this process's cgroup scope directory in its lease (``tools.process.containment``)."""
    me = self_owner()
    if me is None:
        return
    try:
        d = directory or lease_dir()
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(d / me.lease_name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, f"cg {root}\n".encode())
        finally:
            os.close(fd)
    except OSError as exc:
        _log.warning("could not record cgroup scope %s for the reaper: %s", root, exc)


def scan_procs() -> dict[int, ProcInfo]:
    table: dict[int, ProcInfo] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = read_stat(int(entry))
            if info is not None:
                table[info.pid] = info
    return table


def marker(pid: int) -> tuple[int, int] | None:
    """The (owner pid, owner start) a process carries in its environment, if any."""
    try:
        environ = read_bytes(f"/proc/{pid}/environ")
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


def ancestors(pid: int, table: Mapping[int, ProcInfo]) -> set[int]:
    out: set[int] = set()
    while pid > 1 and pid not in out:
        out.add(pid)
        info = table.get(pid)
        if info is None:
            break
        pid = info.ppid
    return out
