"""Which processes of a process group are still alive, from a ``/proc/*/stat`` scan.

Shared by the bash runner (and through it the background tasks) and the hook runner: both end
a group with SIGTERM, a grace period and SIGKILL, and poll this in between. ``killpg(pgid, 0)``
alone is not enough: it succeeds while only zombies remain.
"""

from __future__ import annotations

import os

__all__ = ["group_has_live_members", "live_group_members"]


def _proc_entries() -> list[str] | None:
    """The names in ``/proc``; None where it cannot be listed."""
    try:
        return os.listdir("/proc")
    except OSError:
        return None


def _is_live_member(entry: str, pgid: bytes) -> bool:
    """Whether ``/proc/<entry>`` is a non-zombie process of group ``pgid`` (ASCII digits)."""
    if not entry.isdigit():
        return False
    try:
        with open(f"/proc/{entry}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    # "pid (comm) state ppid pgrp ..."; comm may itself contain spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    return len(fields) >= 3 and fields[0] != b"Z" and fields[2] == pgid


def live_group_members(pgid: int) -> list[int]:
    """PIDs in process group ``pgid`` that are not zombies; [] where ``/proc`` is unreadable."""
    entries = _proc_entries()
    if entries is None:
        return []
    key = str(pgid).encode()
    return [int(e) for e in entries if _is_live_member(e, key)]


def group_has_live_members(pgid: int) -> bool:
    """True while a non-zombie process of group ``pgid`` exists.

    Without a readable ``/proc`` this falls back to ``killpg(pgid, 0)`` (zombies count there).
    """
    entries = _proc_entries()
    if entries is None:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    key = str(pgid).encode()
    return any(_is_live_member(e, key) for e in entries)
