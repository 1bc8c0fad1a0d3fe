"""Run one shell command in its own process group, and make sure none of it survives.

The pattern (see ``reference/stack.md`` §8): we own the output pipe (``os.pipe`` read through
``connect_read_pipe``) so ``proc.wait()`` returns when bash exits even if a background
grandchild still holds the pipe; bash runs in a new session (``pgid == pid``); after bash
exits we give the reader a short linger to drain, then SIGTERM the whole group, wait up to
0.5 s for live (non-zombie) members to go, SIGKILL what is left, close the transport and
reap bash. The same clean-up runs on timeout, on abort and on cancellation. ``run_in_group``
takes these steps (``_GroupRun``: spawn, connect, wait, linger, clean up); ``SpawnOptions``
say how the process starts (environment, inherited fds, cgroup scope, PID namespace).

stdout and stderr are merged into one stream (one pipe for both), so the model sees them
interleaved in the order they were written. stdin is ``/dev/null``.

If Nerve itself is killed (SIGKILL), nothing here runs: the spawn carries owner markers and
its group is recorded so that the next Nerve start ends it (``tools/process/reaper.py``).

A process that calls ``setsid`` itself (``setsid sleep 100 &``) leaves the group. Where cgroups
are writable the command runs in a transient scope of its own (``tools.process.containment``) that is
killed with it; elsewhere the escapee lives until Nerve exits (the owner-marker sweep).

Every command runs with ``core.fsmonitor=false`` in git's command scope (GIT_CONFIG_COUNT/
KEY_n/VALUE_n): the permission engine auto-allows git reads only in the session's own
repository, and this keeps a repository planted behind its back (by a background job, between
the check and the run) from starting its fsmonitor program. Only that key: it changes no
result, where pinning hooks or the bare-repository rule would change what the user's own
commands and tests do (``config.safe_git.pin_git_env``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from config.safe_git import pin_git_env
from tools.context import AbortSignal
from tools.process.containment import Scope, new_scope
from tools.process.groups import live_group_members
from tools.process.owners import note_group, owner_env
from tools.records import datarecord

__all__ = [
    "KILL_GRACE_S",
    "LINGER_S",
    "RunOutcome",
    "SpawnOptions",
    "bash_path",
    "kill_group",
    "live_group_members",
    "run_in_group",
    "signal_name",
]

LINGER_S = 0.2  # after bash exits, how long the reader may drain a pipe held by stragglers
KILL_GRACE_S = 0.5  # between SIGTERM and SIGKILL of the group
_POLL_S = 0.02

_BASH: str | None = None


def bash_path() -> str:
    """Always bash (never ``$SHELL``): the analysis, the rules and the model all assume bash."""
    global _BASH
    if _BASH is None:
        found = "/bin/bash" if os.access("/bin/bash", os.X_OK) else shutil.which("bash")
        if found is None:
            raise FileNotFoundError("bash not found (looked at /bin/bash and PATH)")
        _BASH = found
    return _BASH


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _killpg(pgid: int, sig: int) -> bool:
    """Signal the group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


async def kill_group(pgid: int, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the group, wait up to ``grace_s`` for live members to go, then SIGKILL.

    If this coroutine is itself cancelled during the grace period, the group is SIGKILLed
    before the cancellation propagates: clean-up never leaves survivors behind.
    """
    if not _killpg(pgid, signal.SIGTERM):
        return
    done = False
    try:
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if not live_group_members(pgid):
                done = True
                return
            await asyncio.sleep(_POLL_S)
    finally:
        if not done:
            _killpg(pgid, signal.SIGKILL)


@datarecord(frozen=True, slots=True)
class RunOutcome:
    """How a command ended. ``returncode`` is bash's (negative: killed by that signal)."""

    returncode: int | None
    timed_out: bool
    interrupted: bool
    duration_s: float

    @property
    def exit_code(self) -> int | None:
        rc = self.returncode
        return rc if rc is not None and rc >= 0 else None

    @property
    def signal(self) -> str | None:
        rc = self.returncode
        return signal_name(-rc) if rc is not None and rc < 0 else None


class _SinkProtocol(asyncio.Protocol):
    """Feeds every chunk to ``on_data`` as it arrives; no buffering of its own."""

    def __init__(self, on_data: Callable[[bytes], None], eof: asyncio.Future[None]) -> None:
        self._on_data = on_data
        self._eof = eof

    def data_received(self, data: bytes) -> None:
        self._on_data(data)

    def eof_received(self) -> bool:
        if not self._eof.done():
            self._eof.set_result(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._eof.done():
            self._eof.set_result(None)


@datarecord(frozen=True, slots=True)
class SpawnOptions:
    """How the command's process is started and contained; the defaults suit a plain command."""

    env: dict[str, str] | None = None  # None: Nerve's own environment
    pass_fds: tuple[int, ...] = ()
    # The name of the cgroup scope it runs in (None: no scope of its own).
    scope_kind: str | None = "bash"
    # Runs once the process exists, before the wait (the sandbox's network set-up).
    after_spawn: Callable[[int], Awaitable[None]] | None = None
    # ``argv`` holds its tree in a PID namespace of its own (the sandbox), so once it has
    # exited by itself nothing of it is left to kill (its init is an unreaped zombie, which
    # would cost a ``/proc`` scan to tell from a live member).
    pid_namespace: bool = False


_PLAIN = SpawnOptions()


async def run_in_group(
    argv: list[str],
    *,
    cwd: Path,
    on_data: Callable[[bytes], None],
    timeout_s: float | None,
    abort: AbortSignal | None = None,
    spawn: SpawnOptions = _PLAIN,
    linger_s: float = LINGER_S,
) -> RunOutcome:
    """Run ``argv`` in a new session with stdout+stderr merged into ``on_data``.

    Returns when the process has exited (or was killed on timeout/abort) and its whole
    process group — and its cgroup scope, named ``spawn.scope_kind`` — is gone (see
    ``SpawnOptions``). Raises ``OSError`` if it cannot be started (bad cwd, ...). On
    cancellation the group is killed before ``CancelledError`` propagates.
    """
    started = time.monotonic()
    run = await _GroupRun.spawn(argv, cwd, spawn)
    try:
        await run.connect(on_data)
        if spawn.after_spawn is not None:
            await spawn.after_spawn(run.pgid)
        await run.wait(timeout_s, abort)
        await run.linger(linger_s)
    finally:
        await run.clean_up(spawn.pid_namespace)
    return RunOutcome(
        returncode=run.proc.returncode,
        timed_out=run.timed_out,
        interrupted=run.interrupted,
        duration_s=time.monotonic() - started,
    )


class _GroupRun:
    """One spawned command (its group leader is ``proc``) and what watching it holds: the read
    end of its pipe, the waits, how it ended. ``clean_up`` must run once it exists."""

    def __init__(self, proc: asyncio.subprocess.Process, read_fd: int, scope: Scope | None) -> None:
        self.proc = proc
        self.pgid = proc.pid  # a new session: pgid == pid
        self.timed_out = self.interrupted = False
        self._read_fd = read_fd
        self._scope = scope
        self._eof: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._transport: asyncio.BaseTransport | None = None
        self._wait_task: asyncio.Task[int] | None = None
        self._abort_task: asyncio.Task[None] | None = None

    @classmethod
    async def spawn(cls, argv: list[str], cwd: Path, spawn: SpawnOptions) -> _GroupRun:
        """Start ``argv`` in a new session writing to a pipe we own, in its scope if any;
        on failure nothing is left open."""
        scope: Scope | None = new_scope(spawn.scope_kind) if spawn.scope_kind else None
        r, w = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *(scope.wrap_argv(argv) if scope is not None else argv),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=w,
                stderr=w,
                cwd=str(cwd),
                env=pin_git_env(owner_env(spawn.env)),  # reaper's owner marks; git's fsmonitor off
                start_new_session=True,
                pass_fds=spawn.pass_fds,
            )
        except BaseException:
            os.close(r)
            os.close(w)
            if scope is not None:
                await scope.end()
            raise
        os.close(w)
        note_group(proc.pid)
        return cls(proc, r, scope)

    async def connect(self, on_data: Callable[[bytes], None]) -> None:
        """Feed the pipe to ``on_data`` as it arrives."""
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.connect_read_pipe(
            lambda: _SinkProtocol(on_data, self._eof), os.fdopen(self._read_fd, "rb", 0)
        )

    async def wait(self, timeout_s: float | None, abort: AbortSignal | None) -> None:
        """Until bash exits, the timeout passes (``timed_out``) or ``abort`` fires
        (``interrupted``, at once if it already has)."""
        self._wait_task = wait_task = asyncio.ensure_future(self.proc.wait())
        waiters: set[asyncio.Future[object]] = {wait_task}  # type: ignore[arg-type]
        if abort is not None:
            if abort.aborted:
                self.interrupted = True
                return
            self._abort_task = asyncio.ensure_future(abort.wait())
            waiters.add(self._abort_task)  # type: ignore[arg-type]
        await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if not wait_task.done():
            if self._abort_task is not None and self._abort_task.done():
                self.interrupted = True
            else:
                self.timed_out = True

    async def linger(self, linger_s: float) -> None:
        """Once bash is gone, give the reader ``linger_s`` to drain: stragglers
        (``sleep 100 &``) may hold the pipe open forever."""
        if self._bash_exited() and not self._eof.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._eof), linger_s)

    async def clean_up(self, pid_namespace: bool) -> None:
        """Kill the group and its scope, drain and close the pipe, reap bash. After a timeout,
        an abort, a cancellation or a normal end alike."""
        if self._abort_task is not None and not self._abort_task.done():
            self._abort_task.cancel()
        if not (pid_namespace and self._bash_exited()):
            await kill_group(self.pgid)
        if self._scope is not None:
            await self._scope.end()  # what left the group (setsid) goes too
        if not self._eof.done():
            # The group is dead: what it wrote before dying is still in the pipe. Drain it,
            # unless a process that escaped the group (``setsid``) holds the pipe open.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._eof), 0.05)
        if self._transport is not None:
            self._transport.close()
        else:
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
        await asyncio.shield(self.proc.wait())
        if self._wait_task is not None and not self._wait_task.done():
            self._wait_task.cancel()

    def _bash_exited(self) -> bool:
        return self._wait_task is not None and self._wait_task.done()
