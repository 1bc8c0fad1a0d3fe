"""Reading the files users write (memory, rules, commands, skills, agents) without ever hanging.

A FIFO, a socket or a device named ``CLAUDE.md`` (or ``review.md``) would block ``open`` or never
end a read. Such files are refused by type from ``os.stat`` before any open, and the open itself
is non-blocking with a second check on the opened descriptor, so a file swapped for a FIFO
between the two checks is refused too. Reads are capped; bad bytes are replaced.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MAX_USER_FILE_BYTES", "NotRegularFile", "iter_markdown", "read_user_file"]

MAX_USER_FILE_BYTES = 256 * 1024
MAX_FILES_PER_FOLDER = 1000  # a runaway tree (node_modules symlinked in) costs a bounded walk

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


class NotRegularFile(OSError):
    """The path names something other than a regular file; it was never opened."""


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def read_user_file(path: Path, max_bytes: int = MAX_USER_FILE_BYTES) -> tuple[str, bool]:
    """``(text, truncated)`` of a regular file (symlinks followed).

    Raises ``NotRegularFile`` for FIFOs, sockets, devices and directories (checked before
    opening) and ``OSError`` for what cannot be read.
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(f"{path} is {_kind(st.st_mode)}, not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):  # replaced between stat and open
            raise NotRegularFile(f"{path} is {_kind(opened.st_mode)}, not a regular file")
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    truncated = len(data) > max_bytes
    return data[:max_bytes].decode("utf-8", "replace").lstrip("\ufeff"), truncated


def iter_markdown(folder: Path, *, recursive: bool = True) -> Iterator[Path]:
    """``*.md`` entries under ``folder`` in a stable order (sorted by relative path).

    Symlinked directories are not descended into (no loops); entries that are not regular files
    are still yielded so the caller can warn about them by name.
    """
    if not folder.is_dir():
        return
    found: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / f for f in files if f.endswith(".md"))
        if not recursive or len(found) >= MAX_FILES_PER_FOLDER:
            break
    yield from sorted(found, key=lambda p: p.relative_to(folder).as_posix())[:MAX_FILES_PER_FOLDER]
