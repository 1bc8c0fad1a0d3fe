"""A small real filesystem that can be filled: a tmpfs of a few KB mounted for one test.

Needs root (the test machines run as root); elsewhere the tests that use it are skipped.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["fill", "tiny_tmpfs"]


@contextmanager
def tiny_tmpfs(path: Path, size_kb: int = 64) -> Iterator[Path]:
    """Mount a ``size_kb`` tmpfs at ``path`` (created) for the block; unmounted after."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(directory: Path, name: str = "filler") -> Path:
    """Write zeros into ``directory/name`` until the filesystem is full; returns the file."""
    target = directory / name
    chunk = b"\0" * 4096
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            try:
                if os.write(fd, chunk) == 0:
                    break
            except OSError:
                break
        # the last page may still take a few bytes
        for size in (1024, 128, 16, 1):
            try:
                while os.write(fd, chunk[:size]):
                    pass
            except OSError:
                continue
    finally:
        os.close(fd)
    return target
