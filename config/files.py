"""Reading a settings file that must be a regular file: never hang on a FIFO or a device.

Opening a FIFO for reading blocks until a writer appears, and reading ``/dev/zero`` never ends,
so a settings path is checked by type *before* it is opened (``stat``, which follows a
symlink to its target). The open itself is non-blocking and the descriptor is checked again,
so a file swapped for a FIFO between the two checks cannot hang start-up either. A size cap
keeps a runaway file from filling memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

__all__ = ["MAX_SETTINGS_BYTES", "NotRegularFile", "file_kind", "read_regular_file"]

MAX_SETTINGS_BYTES: Final[int] = 8 * 1024 * 1024
_CHUNK: Final[int] = 64 * 1024


class NotRegularFile(OSError):
    """The path exists but is not a regular file (FIFO, device, socket) or is too large."""


def file_kind(mode: int) -> str:
    """A human name for the type in ``st_mode``: ``"a FIFO (named pipe)"``, ..."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _check_mode(path: Path, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{path}: is a directory")
    if not stat.S_ISREG(mode):
        raise NotRegularFile(f"is {file_kind(mode)}, not a regular file; not opened")


def read_regular_file(path: Path, *, max_bytes: int = MAX_SETTINGS_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes``.

    Raises ``FileNotFoundError``, ``IsADirectoryError``, :class:`NotRegularFile` (with the
    reason as its message) or another ``OSError`` (permission denied, symlink loop, ...).
    """
    _check_mode(path, os.stat(path).st_mode)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        _check_mode(path, info.st_mode)
        if info.st_size > max_bytes:
            raise NotRegularFile(f"is {info.st_size} bytes, over the {max_bytes}-byte limit")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, _CHUNK):
            total += len(chunk)
            if total > max_bytes:  # grew while we read it
                raise NotRegularFile(f"is over the {max_bytes}-byte limit")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
