"""Running ripgrep: find the binary, run it in its own process group, kill it on abort.

The ``ripgrep`` wheel puts ``rg`` next to the venv's Python (``sys.executable``), which is
found first, so the version we tested is the one we run; a system ``rg`` on PATH is the
fallback. The wheel is built without PCRE2: patterns are Rust regex syntax.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from tools.context import AbortSignal
from tools.process.owners import note_group, owner_env
from tools.records import datarecord

__all__ = ["VCS_DIRS", "RgRun", "find_rg", "run_rg", "vcs_excludes"]

VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
MAX_OUTPUT_BYTES = 256 * 1024 * 1024


@lru_cache(maxsize=1)
def find_rg() -> str | None:
    """The ripgrep executable: beside ``sys.executable`` first, else on PATH."""
    local = Path(sys.executable).parent / "rg"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which("rg")


def vcs_excludes() -> list[str]:
    """Globs that keep version-control directories out of every search."""
    return [f"--glob=!{name}" for name in VCS_DIRS]


@datarecord(frozen=True, slots=True)
class RgRun:
    """What one ripgrep process did."""

    returncode: int | None
    stdout: bytes
    stderr: str
    aborted: bool = False
    truncated: bool = False  # output passed MAX_OUTPUT_BYTES and rg was stopped


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


async def run_rg(
    args: Sequence[str],
    cwd: Path,
    abort: AbortSignal,
    on_chunk: Callable[[bytes], None] | None = None,
    max_bytes: int = MAX_OUTPUT_BYTES,
) -> RgRun:
    """Run ``rg args`` in ``cwd``; stop it (its whole group) on abort or cancellation."""
    if abort.aborted:
        return RgRun(None, b"", "", aborted=True)
    rg = find_rg()
    if rg is None:
        raise FileNotFoundError("ripgrep (rg) is not installed")
    proc = await asyncio.create_subprocess_exec(
        rg,
        "--no-config",
        *args,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        env=owner_env(),  # a crash leaves rg to the next start's reaper (tools.process.reaper)
    )
    note_group(proc.pid)
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = proc.stdout, proc.stderr
    truncated = False

    async def pump() -> bytes:
        nonlocal truncated
        chunks: list[bytes] = []
        size = 0
        while chunk := await stdout.read(1 << 17):
            chunks.append(chunk)
            size += len(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
            if size > max_bytes:
                truncated = True
                _kill_group(proc)
                break
        return b"".join(chunks)

    out_task = asyncio.create_task(pump())
    err_task = asyncio.create_task(stderr.read())
    abort_task = asyncio.create_task(abort.wait())
    try:
        await asyncio.wait({out_task, abort_task}, return_when=asyncio.FIRST_COMPLETED)
        if not out_task.done():
            _kill_group(proc)
            out_task.cancel()
            err_task.cancel()
            await asyncio.gather(out_task, err_task, return_exceptions=True)
            await proc.wait()
            return RgRun(proc.returncode, b"", "", aborted=True)
        out = out_task.result()
        err = await err_task
        await proc.wait()
        return RgRun(proc.returncode, out, err.decode("utf-8", "replace"), truncated=truncated)
    finally:
        abort_task.cancel()
        _kill_group(proc)
        for task in (out_task, err_task):
            task.cancel()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(proc.wait())
