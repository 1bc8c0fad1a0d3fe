"""Run one hook command in its own process group, with a timeout and bounded output.

Follows the pattern in ``reference/stack.md`` §8: we own the stdout/stderr pipes (asyncio owns
none), so a background grandchild that keeps a pipe open can never make us wait; the whole
process group is killed on timeout or cancellation (SIGTERM, short grace, SIGKILL). stdin is a
temporary file holding the input JSON, so a hook that never reads stdin cannot block us either.

Each hook runs in a cgroup scope of its own where cgroups are writable (``tools.process.containment``)
and carries the owner marker: a detached job it starts (a ``setsid`` server) may outlive the hook
but not Nerve — it is killed when the session closes, or by the next start after a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from tools.process.containment import Scope, new_scope
from tools.process.groups import group_has_live_members
from tools.process.owners import note_group, owner_env
from tools.records import datarecord

__all__ = ["MAX_CAPTURE_BYTES", "ProcessResult", "group_has_live_members", "run_process"]

# Bytes kept per stream; the rest is read and discarded so the hook never blocks on a full pipe.
MAX_CAPTURE_BYTES = 1_000_000
_CHUNK = 65536


@datarecord(frozen=True, slots=True)
class ProcessResult:
    """What one hook process did. ``exit_code`` is None when it timed out or did not start."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    spawn_error: str | None = None
    stdout_truncated: bool = False
    stderr_truncated: bool = False


async def _kill_group(pgid: int, grace_s: float) -> None:
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace_s
    while loop.time() < deadline:
        if not group_has_live_members(pgid):
            return
        await asyncio.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    # SIGKILL is delivered asynchronously; wait (bounded) until the group is really gone so
    # callers can rely on "nothing of this hook is still running".
    deadline = loop.time() + 1.0
    while loop.time() < deadline and group_has_live_members(pgid):
        await asyncio.sleep(0.01)


def _runnable(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> bool:
    """Whether ``argv[0]`` resolves: a wrapper would turn "not found" into an exit code 127."""
    prog = argv[0] if argv else ""
    if "/" in prog:
        return os.access(cwd / prog, os.X_OK)
    return shutil.which(prog, path=env.get("PATH", os.defpath)) is not None


async def _pump(reader: asyncio.StreamReader, buf: bytearray, max_bytes: int) -> bool:
    """Read to EOF, keeping at most ``max_bytes``; returns whether anything was dropped."""
    dropped = False
    while True:
        chunk = await reader.read(_CHUNK)
        if not chunk:
            return dropped
        room = max_bytes - len(buf)
        if room > 0:
            buf += chunk[:room]
        if len(chunk) > max(room, 0):
            dropped = True


async def _open_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK * 4)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0)
    )
    return reader, transport


async def run_process(
    argv: Sequence[str],
    *,
    stdin_data: bytes,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    max_bytes: int = MAX_CAPTURE_BYTES,
    linger_s: float = 0.2,
    grace_s: float = 0.5,
) -> ProcessResult:
    """Run ``argv`` without a controlling TTY; never raises except on cancellation.

    On a normal exit the process group is left alone unless something in it still holds our
    pipes after ``linger_s`` (then it is killed): a hook may start a well-behaved detached job,
    but not one that would keep us reading forever.
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    scope = new_scope("hook") if _runnable(argv, cwd, env) else None
    try:
        with tempfile.TemporaryFile() as stdin_file:
            stdin_file.write(stdin_data)
            stdin_file.seek(0)
            proc = await asyncio.create_subprocess_exec(
                *(scope.wrap_argv(list(argv)) if scope is not None else argv),
                stdin=stdin_file,
                stdout=out_w,
                stderr=err_w,
                cwd=str(cwd),
                env=owner_env(env),
                start_new_session=True,
            )
    except (OSError, ValueError) as exc:
        for fd in (out_r, out_w, err_r, err_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        if scope is not None:
            await scope.end()
        return ProcessResult(exit_code=None, spawn_error=f"{type(exc).__name__}: {exc}")
    os.close(out_w)
    os.close(err_w)
    note_group(proc.pid)

    pgid = proc.pid  # start_new_session: the child leads its own group
    out_buf, err_buf = bytearray(), bytearray()
    transports: list[asyncio.BaseTransport] = []
    pumps: list[asyncio.Task[bool]] = []
    timed_out = False
    needs_kill = True
    try:
        for fd, buf in ((out_r, out_buf), (err_r, err_buf)):
            reader, transport = await _open_reader(fd)
            transports.append(transport)
            pumps.append(asyncio.create_task(_pump(reader, buf, max_bytes)))
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
        else:
            _, pending = await asyncio.wait(pumps, timeout=linger_s)
            needs_kill = bool(pending)
    finally:
        cleanup = asyncio.ensure_future(
            _cleanup(proc, pgid, needs_kill, grace_s, pumps, transports, scope)
        )
        try:
            await asyncio.shield(cleanup)
        except asyncio.CancelledError:
            # Finish the cleanup anyway; a cancelled caller must not leave processes behind.
            await asyncio.wait({cleanup})
            raise

    if timed_out:
        return ProcessResult(exit_code=None, timed_out=True)
    dropped = [
        p.result() if p.done() and not p.cancelled() and not p.exception() else False for p in pumps
    ]
    return ProcessResult(
        exit_code=proc.returncode,
        stdout=out_buf.decode("utf-8", errors="replace"),
        stderr=err_buf.decode("utf-8", errors="replace"),
        stdout_truncated=dropped[0],
        stderr_truncated=dropped[1],
    )


async def _cleanup(
    proc: asyncio.subprocess.Process,
    pgid: int,
    kill: bool,
    grace_s: float,
    pumps: list[asyncio.Task[bool]],
    transports: list[asyncio.BaseTransport],
    scope: Scope | None = None,
) -> None:
    if kill:
        await _kill_group(pgid, grace_s)
    if scope is not None:
        # a killed hook's scope goes now; a finished hook's detached job waits for session end
        await scope.end(keep_if_populated=not kill)
    for p in pumps:
        if not p.done():
            p.cancel()
    if pumps:
        await asyncio.wait(pumps)
    for t in transports:
        t.close()
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), 5)
    except TimeoutError:
        # Still alive after SIGKILL of its group: nothing more we can do without blocking.
        pass
