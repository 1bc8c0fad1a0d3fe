"""Mount points for protected paths that do not exist yet, and nothing left behind.

A bind mount needs its mount point to exist. A repository without ``.claude/`` would otherwise
let a sandboxed command create ``.claude/settings.local.json`` (hooks and allow rules the next
session would load); so an empty directory is made first and mounted read-only over itself.
Some stubs are files with a fixed content instead: ``.git/commondir`` holds ``.`` (git refuses
to run with an empty or unreadable one; ``.`` means "this git directory", what git assumes when
the file is missing), ``config.worktree`` is empty.
The reference's sandbox leaves such stubs behind in other projects; here each one is removed
as soon as the last command using it ends (a directory while still empty, a file while it
still holds what was written), and is written to a journal beside the owner leases first, so
that a crash in between is cleaned up by the next start.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from tools.process.owners import Owner, lease_dir, read_stat, self_owner

__all__ = ["StubRegistry", "sweep_dead_journals"]


def _journal_dir() -> Path:
    return lease_dir().parent / "sandbox-stubs"


class StubRegistry:
    """Reference-counted stub directories of this process (one registry per process)."""

    def __init__(self, journal_dir: Path | None = None) -> None:
        self._dir = journal_dir
        self._counts: dict[Path, int] = {}
        self._contents: dict[Path, bytes | None] = {}
        self._lock = threading.Lock()

    def _journal(self) -> Path | None:
        me = self_owner()
        return None if me is None else (self._dir or _journal_dir()) / me.lease_name

    def acquire(self, path: Path, content: bytes | None = None) -> bool:
        """Make ``path`` unless it exists: an empty directory, or a file holding ``content``
        when given. True when it is ours now."""
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
                        fh.write(_journal_line(path, content))
                if content is None:
                    path.mkdir(mode=0o755)
                else:
                    _write_new(path, content)
            except OSError:
                return False
            self._counts[path] = 1
            self._contents[path] = content
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
                _remove(path, self._contents.pop(path, None))
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
                parsed = _parse_journal_line(line)
                if parsed is not None and _remove(*parsed):
                    removed.append(parsed[0])
            journal.unlink()
    return removed


_FILE_PREFIX = "file:"  # a file stub's journal line: file:<hex content>:<path>


def _journal_line(path: Path, content: bytes | None) -> str:
    return f"{path}\n" if content is None else f"{_FILE_PREFIX}{content.hex()}:{path}\n"


def _parse_journal_line(line: str) -> tuple[Path, bytes | None] | None:
    if line.startswith("/"):
        return Path(line), None
    if line.startswith(_FILE_PREFIX):
        hex_content, _, path = line[len(_FILE_PREFIX) :].partition(":")
        with contextlib.suppress(ValueError):
            if path.startswith("/"):
                return Path(path), bytes.fromhex(hex_content)
    return None


def _write_new(path: Path, content: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)


def _remove(path: Path, content: bytes | None) -> bool:
    """Remove a stub that is still as made: an empty directory, or a regular file holding
    ``content``; anything someone changed since is theirs and stays. True when removed."""
    try:
        if content is None:
            if not path.is_dir() or path.is_symlink():
                return False
            path.rmdir()  # not empty: someone outside the sandbox put files there
            return True
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("rb") as fh:
            if fh.read(len(content) + 1) != content:
                return False
        path.unlink()
        return True
    except OSError:
        return False
