"""Mount points for protected directories that do not exist yet, and nothing left behind.

A bind mount needs its mount point to exist. A repository without ``.claude/`` would otherwise
let a sandboxed command create ``.claude/settings.local.json`` (hooks and allow rules the next
session would load); so an empty directory is made first and mounted read-only over itself.
The reference's sandbox leaves such stubs behind in other projects; here each one is removed
as soon as the last command using it ends (while still empty), and is written to a journal
beside the owner leases first, so that a crash in between is cleaned up by the next start.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from pathlib import Path

from tools.builtin.owners import Owner, lease_dir, read_stat, self_owner

__all__ = ["StubRegistry", "sweep_dead_journals"]


def _journal_dir() -> Path:
    return lease_dir().parent / "sandbox-stubs"


class StubRegistry:
    """Reference-counted stub directories of this process (one registry per process)."""

    def __init__(self, journal_dir: Path | None = None) -> None:
        self._dir = journal_dir
        self._counts: dict[Path, int] = {}
        self._lock = threading.Lock()

    def _journal(self) -> Path | None:
        me = self_owner()
        return None if me is None else (self._dir or _journal_dir()) / me.lease_name

    def acquire(self, path: Path) -> bool:
        """Make ``path`` (an empty directory) unless it exists; True when it is ours now."""
        with self._lock:
            if path in self._counts:
                self._counts[path] += 1
                return True
            if path.exists() or path.is_symlink() or not path.parent.is_dir():
                return False
            journal = self._journal()
            try:
                if journal is not None:
                    journal.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                    with journal.open("a") as fh:
                        fh.write(f"{path}\n")
                path.mkdir(mode=0o755)
            except OSError:
                return False
            self._counts[path] = 1
            return True

    def release(self, paths: Iterable[Path]) -> None:
        """One command is done with ``paths``; the last one removes them (if still empty)."""
        with self._lock:
            for path in paths:
                if path not in self._counts:
                    continue  # never ours
                n = self._counts[path] - 1
                if n > 0:
                    self._counts[path] = n
                    continue
                self._counts.pop(path, None)
                with contextlib.suppress(OSError):
                    path.rmdir()  # not empty: someone outside the sandbox put files there
            if not self._counts:
                journal = self._journal()
                if journal is not None:
                    with contextlib.suppress(OSError):
                        journal.unlink()


def sweep_dead_journals(journal_dir: Path | None = None) -> list[Path]:
    """Remove the stubs a crashed Nerve left (still-empty directories); returns them."""
    root = journal_dir or _journal_dir()
    removed: list[Path] = []
    try:
        journals = list(root.iterdir())
    except OSError:
        return removed
    for journal in journals:
        owner = Owner.from_lease_name(journal.name)
        if owner is None:
            continue
        info = read_stat(owner.pid)
        if info is not None and info.live and info.start == owner.start:
            continue  # its owner still runs
        with contextlib.suppress(OSError):
            for line in journal.read_text().splitlines():
                stub = Path(line)
                if line.startswith("/") and stub.is_dir() and not stub.is_symlink():
                    with contextlib.suppress(OSError):
                        stub.rmdir()
                        removed.append(stub)
            journal.unlink()
    return removed
