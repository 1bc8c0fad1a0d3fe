"""One writer per session: the process that appends to a transcript holds an ``flock`` on it.

The lock lives as long as the descriptor: it goes when the session closes the file or the
process dies (even by ``kill -9``), so a crashed Nerve never leaves a session locked. Who holds
a lock is read from ``/proc/locks`` (Linux); elsewhere the message says "another process".
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

__all__ = ["SessionInUse", "lock_holder", "try_lock"]


class SessionInUse(Exception):
    """Another process is writing this session's transcript."""

    def __init__(self, path: Path, holder: int | None) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"session {path.stem} is in use by {self.holder_text()}")

    def holder_text(self) -> str:
        if self.holder is None:
            return "another process"
        name = _process_name(self.holder)
        return f"{name} (pid {self.holder})" if name else f"pid {self.holder}"


def try_lock(fd: int) -> bool:
    """Take the exclusive lock of an open transcript without waiting; False if it is held."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True  # a filesystem without locks: nothing to enforce, nothing to refuse
    return True


def lock_holder(path: Path) -> int | None:
    """The pid holding an flock on ``path``, if ``/proc/locks`` says."""
    try:
        st = path.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 fe:00:2146673 0 EOF"; "->" lines are waiters
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == key:
            try:
                return int(fields[4])
            except ValueError:
                return None
    return None


def _process_name(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return ""
    words = [os.path.basename(a.decode("utf-8", "replace")) for a in argv[:2] if a]
    if any(w == "nerve" for w in words):
        return "nerve"
    return words[0] if words else ""
