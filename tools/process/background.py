"""Background shell tasks: started by ``Bash(run_in_background=true)``, read by TaskOutput.

Each task runs ``bash -c <command>`` in its own session/process group with stdout+stderr
written straight to a log file (``<session_dir>/tasks/<id>.log`` or a per-user temp dir), so
nothing in this process buffers its output. A watcher awaits bash's exit, then ends whatever
is left of the group (a task never leaves orphans behind). ``stop`` kills the whole group
(SIGTERM, grace, SIGKILL); ``stop_all`` does so for every task at session end. Listeners
(``subscribe``) are told of each task's start and of its end, with its snapshot (the Agent SDK
mode turns them into ``task_started``/``task_updated``/``task_notification`` frames).

One manager lives in ``ctx.state.conversation.background_tasks`` (see :func:`get_manager`),
shared with sub-agents so that session end reaches their tasks too.
"""

from __future__ import annotations

import asyncio
import builtins
import codecs
import contextlib
import os
import secrets
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from tools.context import ToolUseContext
from tools.process.containment import Scope, kill_cgroup_tree, new_scope
from tools.process.output import clean_text, spool_dir
from tools.process.owners import note_group, owner_env
from tools.process.runner import bash_path, kill_group, signal_name
from tools.records import datarecord

__all__ = [
    "MAX_READ_BYTES",
    "BackgroundTask",
    "BackgroundTaskManager",
    "TaskListener",
    "TaskSnapshot",
    "TaskStatus",
    "get_manager",
]

TaskStatus = Literal["running", "completed", "failed", "killed"]
MAX_READ_BYTES = 30_000  # one TaskOutput read returns at most this much (the newest part)


@datarecord(frozen=True, slots=True)
class TaskSnapshot:
    """What the UI status bar and transcripts see of a task."""

    task_id: str
    command: str
    status: TaskStatus
    exit_code: int | None
    signal: str | None
    started_at: float  # wall clock (time.time())
    ended_at: float | None
    output_path: str
    description: str = ""  # the Bash call's description, else "" (not kept in transcripts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "command": self.command,
            "status": self.status,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "output_path": self.output_path,
        }


@datarecord(slots=True)
class BackgroundTask:
    """One running (or finished) background command. Mutated only by its manager."""

    task_id: str
    command: str
    output_path: Path
    proc: asyncio.subprocess.Process
    started_at: float
    status: TaskStatus = "running"
    ended_at: float | None = None
    killed: bool = False
    read_offset: int = 0
    decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace")
    )
    done: asyncio.Event = field(default_factory=asyncio.Event)
    watcher: asyncio.Task[None] | None = None
    scope: Scope | None = None  # its cgroup (tools.process.containment), or None
    cleanup: Any = None  # an async callable run once the task has ended (the sandbox's)
    notes: list[str] = field(default_factory=list)  # e.g. network access the sandbox refused
    description: str = ""

    @property
    def pgid(self) -> int:
        return self.proc.pid

    def snapshot(self) -> TaskSnapshot:
        rc = self.proc.returncode if self.status != "running" else None
        return TaskSnapshot(
            task_id=self.task_id,
            command=self.command,
            status=self.status,
            exit_code=rc if rc is not None and rc >= 0 else None,
            signal=signal_name(-rc) if rc is not None and rc < 0 else None,
            started_at=self.started_at,
            ended_at=self.ended_at,
            output_path=str(self.output_path),
            description=self.description,
        )


TaskListener = Callable[[TaskSnapshot], None]


class BackgroundTaskManager:
    """Starts, reads, stops and lists background tasks (see module docstring)."""

    def __init__(self, session_dir: Path | None = None) -> None:
        self.session_dir = session_dir
        self._tasks: dict[str, BackgroundTask] = {}
        self._listeners: list[TaskListener] = []

    def subscribe(self, listener: TaskListener) -> Callable[[], None]:
        """Call ``listener(snapshot)`` when a task starts and when it ends; returns unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _notify(self, task: BackgroundTask) -> None:
        snap = task.snapshot()
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a listener never breaks a task
                listener(snap)

    def _new_id(self) -> str:
        while True:
            task_id = "b" + secrets.token_hex(3)[1:]
            if task_id not in self._tasks:
                return task_id

    async def start(
        self,
        command: str,
        *,
        cwd: Path,
        argv: list[str] | None = None,
        env: Mapping[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
        after_spawn: Any = None,
        cleanup: Any = None,
        description: str = "",
    ) -> TaskSnapshot:
        """Start ``command`` in the background (in ``env``, default ours); returns at once.

        ``argv`` replaces ``bash -c command`` (a sandboxed run: no cgroup scope then, its PID
        namespace holds it); ``after_spawn(pid)`` is awaited once it exists and ``cleanup()``
        once it has ended.
        """
        task_id = self._new_id()
        path = spool_dir(self.session_dir, "tasks") / f"{task_id}.log"
        scope = None if argv is not None else new_scope("task")
        run = argv or [bash_path(), "-c", command]
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            proc = await asyncio.create_subprocess_exec(
                *(scope.wrap_argv(run) if scope is not None else run),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=fd,
                stderr=fd,
                cwd=str(cwd),
                env=owner_env(env),  # a crashed Nerve's task is ended by the next start's reaper
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except BaseException:
            if scope is not None:
                await scope.end()
            raise
        finally:
            os.close(fd)
        note_group(proc.pid)
        task = BackgroundTask(
            task_id=task_id,
            command=command,
            output_path=path,
            proc=proc,
            started_at=time.time(),
            scope=scope,
            cleanup=cleanup,
            description=description,
        )
        self._tasks[task_id] = task
        task.watcher = asyncio.ensure_future(self._watch(task))
        self._notify(task)
        if after_spawn is not None:
            try:
                await after_spawn(proc.pid, task)
            except BaseException:
                await self.stop(task_id)
                raise
        return task.snapshot()

    async def _watch(self, task: BackgroundTask) -> None:
        try:
            await task.proc.wait()
        finally:
            # bash is gone; whatever it left running in its group (and its scope) goes with it.
            await kill_group(task.pgid)
            if task.scope is not None:
                await task.scope.end()
            if task.cleanup is not None:
                await task.cleanup()
            if task.status == "running":
                rc = task.proc.returncode
                task.status = "killed" if task.killed else ("completed" if rc == 0 else "failed")
                task.ended_at = time.time()
            task.done.set()
            self._notify(task)

    def get(self, task_id: str) -> BackgroundTask | None:
        return self._tasks.get(task_id)

    def ids(self) -> builtins.list[str]:
        return list(self._tasks)

    def list(self) -> list[TaskSnapshot]:
        """Every task of the session, oldest first."""
        return [t.snapshot() for t in self._tasks.values()]

    def records(self) -> builtins.list[dict[str, Any]]:
        """Plain dicts for the transcript (sync, no I/O)."""
        return [t.snapshot().as_dict() for t in self._tasks.values()]

    def read_new(self, task_id: str, max_bytes: int = MAX_READ_BYTES) -> tuple[str, int]:
        """Output written since the last read (decoded), and how many older bytes were skipped.

        When more than ``max_bytes`` arrived, only the newest ``max_bytes`` are returned (the
        log file keeps everything).
        """
        task = self._tasks[task_id]
        try:
            with open(task.output_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                end = fh.tell()
                skipped = 0
                start = task.read_offset
                if end - start > max_bytes:
                    skipped = end - max_bytes - start
                    start = end - max_bytes
                    task.decoder.reset()
                fh.seek(start)
                data = fh.read(end - start)
        except OSError:
            return "", 0
        task.read_offset = start + len(data)
        final = task.status != "running"
        text = task.decoder.decode(data, final=final)
        return clean_text(text), skipped

    async def wait(self, task_id: str, timeout_s: float | None) -> bool:
        """Wait until the task ends (True) or the timeout passes (False)."""
        task = self._tasks[task_id]
        try:
            await asyncio.wait_for(task.done.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def stop(self, task_id: str) -> TaskSnapshot:
        """End the task's whole process group; returns its final state."""
        task = self._tasks[task_id]
        if task.status == "running":
            task.killed = True
            await kill_group(task.pgid)
            if task.watcher is not None:
                await asyncio.shield(task.watcher)
        return task.snapshot()

    async def stop_all(self) -> None:
        """Session end: kill every running task's group and wait until all are reaped."""
        running = [t.task_id for t in self._tasks.values() if t.status == "running"]
        await asyncio.gather(*(self.stop(tid) for tid in running))

    def kill_all_now(self) -> None:
        """Last resort on a synchronous exit path: SIGKILL every running group, no waiting."""
        for task in self._tasks.values():
            if task.status == "running":
                task.killed = True
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(task.pgid, signal.SIGKILL)
                if task.scope is not None:
                    kill_cgroup_tree(task.scope.path)


def get_manager(ctx: ToolUseContext) -> BackgroundTaskManager:
    """The session's manager, created on first use in ``ctx.state.conversation``."""
    state = ctx.state.conversation
    if state.background_tasks is None:
        state.background_tasks = BackgroundTaskManager(ctx.options.session_dir)
    return state.background_tasks
