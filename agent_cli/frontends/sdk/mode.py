"""``nerve --input-format stream-json --output-format stream-json``: the Agent SDK's mode.

Headless (no ``-p`` needed, never the TUI). stdin is read line by line, each line one JSON
object: a ``control_request`` is answered with a ``control_response`` on its request id (an
unknown subtype gets an error answer), a ``control_response`` answers one of Nerve's own
requests, each ``{"type": "user", ...}`` line is one turn (turns run in order, one at a time).
stdout carries Claude Code's frames (``agent_cli.frontends.stream_json.writer``) and the control
messages. A line that is not JSON, or of a type Nerve does not know, is reported on stderr and
skipped: the session goes on. When stdin closes, the turns already received still run (the SDK
closes stdin right after its prompt when it has no callbacks), then nerve exits; a request
still waiting for an answer gets none and fails closed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from agent_cli.frontends.sdk.context import replay_prompts
from agent_cli.frontends.sdk.control import (
    ControlChannel,
    ControlError,
    error_response,
    parse_line,
    success_response,
)
from agent_cli.frontends.sdk.hooks import register_sdk_hooks
from agent_cli.frontends.sdk.initialize import boot_options, initialize_request
from agent_cli.frontends.sdk.mcp import attach_sdk_mcp
from agent_cli.frontends.sdk.requests import SdkRequests
from agent_cli.frontends.sdk.state import SessionStateFrames
from agent_cli.frontends.sdk.tasks import TaskFrames
from agent_cli.frontends.stream_json.writer import StreamJsonWriter
from agent_cli.loop.events import ErrorEvent, Notice, TurnFinished
from agent_cli.options import RunOptions, is_mcp_prompt_tool

if TYPE_CHECKING:
    from agent_cli.frontends.print.structured_output import StructuredOutput

__all__ = ["SdkMode", "run_sdk_mode", "user_prompt"]

_IGNORED = ("keep_alive",)


def user_prompt(frame: dict[str, Any]) -> tuple[str | None, str | None]:
    """The prompt of a ``user`` line (a string, or its text blocks), or why there is none."""
    message = frame.get("message")
    if not isinstance(message, dict):
        return None, 'a user line needs a "message" object'
    content = message.get("content")
    if isinstance(content, str):
        return (content, None) if content.strip() else (None, "the user message is empty")
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        prompt = "\n\n".join(t for t in texts if isinstance(t, str) and t)
        if prompt.strip():
            return prompt, None
    return None, "the user message has no text content"


class SdkMode:
    """One session driven over stdin/stdout (see module docstring)."""

    def __init__(
        self,
        session: Any,
        options: RunOptions,
        out: TextIO,
        err: TextIO,
        structured: StructuredOutput | None = None,
    ) -> None:
        self.session = session
        self.structured = structured  # --json-schema: each prompt's answer as validated JSON
        if structured is not None:
            structured.install(session)
        self.err = err
        self.writer = StreamJsonWriter(out, partial=options.include_partial_messages)
        self.writer.attach(session)
        self.task_frames = TaskFrames(session, self.writer.system)
        self.channel = ControlChannel(self.writer.write)
        self.requests = SdkRequests(
            session, lambda hooks: register_sdk_hooks(session, self.channel, hooks, self.warn)
        )
        self.requests.warn = self.warn
        self.states = SessionStateFrames(
            self.writer.system, session.ctx.options.environ or os.environ
        )
        self.channel.watch = self.states.watch
        attach_sdk_mcp(session, self.channel)
        if options.replay_user_messages:
            replay_prompts(session, self.writer.write)
        tool = options.permission_prompt_tool
        if tool == "stdio":
            from agent_cli.frontends.sdk.permissions import StdioPermissionPrompt

            session.set_permission_handler(StdioPermissionPrompt(self.channel, session, self.warn))
        elif tool is not None:
            from agent_cli.frontends.print.mcp_permissions import McpPermissionPrompt

            session.set_permission_handler(McpPermissionPrompt(session, tool))
        self.turns: asyncio.Queue[str | None] = asyncio.Queue()
        self.queued = 0  # prompts received whose turn has not started
        self.last_error = False
        self._lineno = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def warn(self, text: str) -> None:
        print(f"nerve: {text}", file=self.err, flush=True)

    # -- input ----------------------------------------------------------------------------------

    def dispatch(self, raw: bytes) -> None:
        self._lineno += 1
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return
        frame, why = parse_line(line)
        where = f"stream-json input line {self._lineno}"
        if frame is None:
            self.warn(f"{where}: {why}; skipped")
            return
        kind = frame["type"]
        if kind == "control_request":
            task = asyncio.create_task(self._answer(frame, where))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif kind == "control_response":
            complaint = self.channel.answer(frame)
            if complaint is not None:
                self.warn(f"{where}: {complaint}; skipped")
        elif kind == "user":
            prompt, why = user_prompt(frame)
            if prompt is None:
                self.warn(f"{where}: {why}; skipped")
            else:
                self.queued += 1
                self.turns.put_nowait(prompt)
        elif kind not in _IGNORED:
            self.warn(f"{where}: unknown message type {kind!r}; skipped")

    async def _answer(self, frame: dict[str, Any], where: str) -> None:
        request_id = frame.get("request_id")
        request = frame.get("request")
        if not isinstance(request_id, str) or not request_id:
            self.warn(f'{where}: a control_request without a "request_id"; skipped')
            return
        if not isinstance(request, dict):
            self.writer.write(error_response(request_id, 'no "request" object'))
            return
        try:
            body = await self.requests.handle(request)
        except ControlError as exc:
            self.writer.write(error_response(request_id, str(exc)))
        except Exception as exc:  # a bug answers as an error; the session goes on
            self.writer.write(error_response(request_id, f"internal error: {exc}"))
        else:
            self.writer.write(success_response(request_id, body))

    # -- turns ----------------------------------------------------------------------------------

    async def run_turns(self) -> None:
        while (prompt := await self.turns.get()) is not None:
            self.queued -= 1
            self.states.turn_started()
            await self._turn(prompt)
            self.states.turn_finished(more_queued=self.queued > 0)

    async def _turn(self, prompt: str) -> None:
        started = time.perf_counter()
        self.writer.begin_turn()
        finished: TurnFinished | None = None
        errors: list[str] = []
        api_error: tuple[int | None, str | None] | None = None
        structured = self.structured
        if structured is not None:
            structured.start_turn()
        turn = (
            self.session.run_turn(prompt)
            if structured is None
            else structured.run(self.session, prompt)
        )
        try:
            async for event in turn:
                self.writer.event(event)
                if isinstance(event, Notice) and event.level == "warning":
                    self.warn(event.text)
                elif isinstance(event, ErrorEvent):
                    errors.append(event.message)
                    if event.status is not None:
                        api_error = (event.status, event.error_type)
                elif isinstance(event, TurnFinished):
                    finished = event
        except Exception as exc:  # never leave the SDK without a result for its prompt
            errors.append(f"internal error: {type(exc).__name__}: {exc}")
        if finished is None:
            finished = TurnFinished("error", 0, is_error=True)
        frame = self.writer.result_frame(
            finished,
            duration_ms=int((time.perf_counter() - started) * 1000),
            errors=errors,
            api_error=api_error if finished.stop_reason == "error" else None,
            queued=max(self.queued, 0),
        )
        if structured is not None:
            structured.add_to_result(frame)
        self.last_error = bool(frame["is_error"])
        self.writer.finish(frame)


def _start_reader(stdin: BinaryIO, queue: asyncio.Queue[bytes | None]) -> None:
    """stdin lines into ``queue`` from a thread (a pipe, a file or a tty alike); None at EOF."""
    loop = asyncio.get_running_loop()

    def put(item: bytes | None) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: nerve is exiting
            pass

    def read() -> None:
        try:
            for raw in iter(stdin.readline, b""):
                put(raw)
        except (OSError, ValueError):
            pass
        finally:
            put(None)

    threading.Thread(target=read, name="nerve-stdin", daemon=True).start()


async def _run(options: RunOptions, stdin: BinaryIO, out: TextIO, err: TextIO) -> int:
    from agent_cli.model.config import MissingApiKey
    from agent_cli.session.agent_session import AgentSession, SessionError

    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    _start_reader(stdin, lines)
    # The first line, read before the session is built: the SDK's initialize may carry what
    # shapes it (the TypeScript SDK's system prompt and MCP servers, sdk.initialize).
    first = await lines.get()
    boot = initialize_request(parse_line(first.decode("utf-8", "replace"))[0]) if first else None
    if boot is not None:
        options, problems = boot_options(options, boot)
        for problem in problems:
            print(f"nerve: {problem}", file=err, flush=True)
    from agent_cli.frontends.print.structured_output import for_option

    try:
        structured = for_option(options.json_schema, Path.cwd())
        session = AgentSession.create(options, interactive=False)
    except (MissingApiKey, SessionError, ValueError) as exc:
        print(f"nerve: {exc}", file=err)
        return 1
    mode = SdkMode(session, options, out, err, structured)
    mode.requests.booted = boot is not None
    loop = asyncio.get_running_loop()

    def stop() -> None:  # SIGTERM: the running turn ends and no new one starts
        session.abort()
        lines.put_nowait(None)

    try:
        loop.add_signal_handler(signal.SIGINT, session.abort)
        loop.add_signal_handler(signal.SIGTERM, stop)
    except (NotImplementedError, RuntimeError):
        pass
    turns = asyncio.create_task(mode.run_turns())
    try:
        raw = first
        while raw is not None:  # None: stdin closed (or SIGTERM)
            mode.dispatch(raw)
            raw = await lines.get()
        mode.channel.close("stdin closed before the SDK answered")
        mode.turns.put_nowait(None)
        await turns
    finally:
        turns.cancel()
        await session.close()
    return 1 if mode.last_error else 0


def run_sdk_mode(options: RunOptions) -> int:
    tool = options.permission_prompt_tool
    if tool not in (None, "stdio") and not is_mcp_prompt_tool(tool):
        print(
            f"nerve: --permission-prompt-tool {tool!r} is not supported (only 'stdio', the "
            "Agent SDK's can_use_tool, or an MCP tool mcp__server__tool)",
            file=sys.stderr,
        )
        return 2
    if options.output_format != "stream-json":
        print(
            "nerve: --input-format stream-json needs --output-format stream-json",
            file=sys.stderr,
        )
        return 2
    return asyncio.run(_run(options, sys.stdin.buffer, sys.stdout, sys.stderr))
