"""``nerve -p PROMPT``: one turn, no UI, output as text, json or stream-json.

An ask becomes a denial whose text tells the model why (nobody is there to answer), except
that ``bypassPermissions`` and ``dontAsk`` decide by themselves as their definitions say.
Print mode never shows the folder-trust prompt: an untrusted project's allow rules, mode,
directories, env and hooks are not applied, and a warning on stderr says so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import sys
import time
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agent_cli.frontends.print.tty_text import for_stream
from agent_cli.frontends.stream_json.writer import StreamJsonWriter
from agent_cli.loop.events import (
    AgentEvent,
    CompactProgress,
    ErrorEvent,
    Notice,
    RetryEvent,
    TurnFinished,
)
from agent_cli.options import RunOptions, is_mcp_prompt_tool
from tools.records import datarecord

if TYPE_CHECKING:
    from agent_cli.frontends.print.structured_output import StructuredOutput
    from agent_cli.slash.registry import SlashCommand

__all__ = ["event_to_json", "run_print_mode"]


def event_to_json(event: AgentEvent) -> dict[str, Any]:
    """One stream-json line: the event's fields plus ``type`` (snake_case class name)."""
    name = type(event).__name__
    snake = "".join(("_" + c.lower()) if c.isupper() else c for c in name).lstrip("_")
    data = dataclasses.asdict(event)
    return {"type": snake, **data}


async def _run(options: RunOptions, prompt: str, out: TextIO, err: TextIO) -> int:
    """A slash command that needs no session; else open the session, run the command or the
    turn in it, write the output. Returns the exit code."""
    started = time.perf_counter()
    command = _slash_command(prompt)
    if command is not None and not command[0].needs_session:
        return await _run_command(options, command, None, out, err)
    opened = _open_session(options, err)
    if opened is None:
        return 1
    session, structured = opened
    told = _prepare_session(session, options, structured, err)
    if command is not None:  # Ctrl+C cancels a long one (/compact) as it would a turn
        try:
            return await _run_command(options, command, session, out, err)
        finally:
            await session.close()
    writer = _result_writer(session, options, out)
    try:
        outcome = await _run_turn(
            session, prompt, structured, writer, _Stderr(err, options.output_format, told)
        )
    finally:
        await session.close()
    finished = outcome.finished
    assert finished is not None
    duration_ms = int((time.perf_counter() - started) * 1000)
    if writer is None:
        _write_text(finished, structured, out, err)
    else:
        _write_result(writer, outcome, structured, duration_ms)
    return _exit_code(finished, structured)


def _slash_command(prompt: str) -> tuple[SlashCommand, str] | None:
    """The command the prompt names, with its arguments; None for a prompt for the model."""
    if not prompt.lstrip().startswith("/"):  # the slash registry costs start-up time: only then
        return None
    from agent_cli.frontends.print.slash import find_command

    return find_command(prompt)


async def _run_command(
    options: RunOptions,
    command: tuple[SlashCommand, str],
    session: Any,
    out: TextIO,
    err: TextIO,
) -> int:
    from agent_cli.frontends.print.slash import run_print_command

    return await run_print_command(options, command[0], command[1], session, out, err)


def _open_session(options: RunOptions, err: TextIO) -> tuple[Any, StructuredOutput | None] | None:
    """The session, and the ``--json-schema`` output it must give; None when either cannot be
    had (said on ``err``)."""
    from agent_cli.model.config import MissingApiKey
    from agent_cli.session.agent_session import AgentSession, SessionError

    structured = None
    if options.json_schema is not None:
        from agent_cli.frontends.print.structured_output import for_option

        try:
            structured = for_option(options.json_schema, Path.cwd())
        except ValueError as exc:
            print(f"nerve: {exc}", file=err)
            return None
    try:
        session = AgentSession.create(options, interactive=False)
    except (MissingApiKey, SessionError, ValueError) as exc:
        print(f"nerve: {exc}", file=err)
        return None
    return session, structured


def _prepare_session(
    session: Any, options: RunOptions, structured: StructuredOutput | None, err: TextIO
) -> str | None:
    """Say what an untrusted folder withheld (returned, so it is not said twice), send asks
    to ``--permission-prompt-tool``, give the model the structured output's tool, and let
    Ctrl+C and SIGTERM abort the turn."""
    told = _warn_untrusted(session, options, err)
    if (tool := options.permission_prompt_tool) is not None and is_mcp_prompt_tool(tool):
        from agent_cli.frontends.print.mcp_permissions import McpPermissionPrompt

        session.set_permission_handler(McpPermissionPrompt(session, tool))  # asks go to the tool
    if structured is not None:
        structured.install(session)
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, session.abort)
        loop.add_signal_handler(signal.SIGTERM, session.abort)
    except (NotImplementedError, RuntimeError):
        pass
    return told


def _result_writer(session: Any, options: RunOptions, out: TextIO) -> StreamJsonWriter | None:
    """The stream-json or json writer, attached to the session; None for text output."""
    if options.output_format not in ("stream-json", "json"):
        return None
    writer = StreamJsonWriter(
        out,
        partial=options.include_partial_messages,
        frames=options.output_format == "stream-json",
    )
    writer.attach(session)
    writer.begin_turn()
    return writer


@datarecord
class _TurnOutcome:
    """What the turn's events said: how it finished, its errors, the API error that ended it."""

    finished: TurnFinished | None = None
    errors: list[str] = field(default_factory=list)
    api_error: tuple[int | None, str | None] | None = None

    def note(self, event: AgentEvent) -> None:
        if isinstance(event, ErrorEvent):
            self.errors.append(event.message)
            if event.status is not None:
                self.api_error = (event.status, event.error_type)
        elif isinstance(event, TurnFinished):
            self.finished = event


@datarecord
class _Stderr:
    """What the user is told on stderr while the turn runs: text output says its notices,
    retries and errors there; json keeps stdout to its one result, so warnings go there too."""

    err: TextIO
    output_format: str
    told: str | None  # the untrusted-folder warning, already printed

    def report(self, event: AgentEvent) -> None:
        line = self._line(event)
        if line is not None:
            print(for_stream(f"nerve: {line}", self.err), file=self.err, flush=True)

    def _line(self, event: AgentEvent) -> str | None:
        text = self.output_format == "text"
        if isinstance(event, RetryEvent) and event.fallback_model:  # said in every format
            return event.reason
        if isinstance(event, Notice) and text:
            return event.text
        if isinstance(event, RetryEvent) and text:
            return f"retrying in {event.delay_s:.1f}s (attempt {event.attempt}): {event.reason}"
        if isinstance(event, Notice) and event.level == "warning":
            # a warning (a settings file that is ignored, ...) must still reach the user
            return event.text if event.text != self.told else None
        if isinstance(event, CompactProgress) and (
            event.final or (event.stage == "started" and text)
        ):
            return event.text
        if isinstance(event, ErrorEvent) and text:
            return f"error: {event.message}"
        return None


async def _run_turn(
    session: Any,
    prompt: str,
    structured: StructuredOutput | None,
    writer: StreamJsonWriter | None,
    stderr: _Stderr,
) -> _TurnOutcome:
    """Run the prompt (asking again for the structured output while the model owes it),
    handing each event to the writer and to stderr."""
    outcome = _TurnOutcome()
    turns = session.run_turn(prompt) if structured is None else structured.run(session, prompt)
    async for event in turns:
        if writer is not None:
            writer.event(event)
        stderr.report(event)
        outcome.note(event)
    return outcome


def _write_text(
    finished: TurnFinished, structured: StructuredOutput | None, out: TextIO, err: TextIO
) -> None:
    """Text output: the structured output as JSON, else the answer's text."""
    if structured is not None and structured.provided:
        print(json.dumps(structured.value, ensure_ascii=False), file=out)
    elif structured is not None and structured.exhausted:
        print(f"nerve: error: {structured.failure()}", file=err)
    elif finished.result_text:
        print(for_stream(finished.result_text, out), file=out)


def _write_result(
    writer: StreamJsonWriter,
    outcome: _TurnOutcome,
    structured: StructuredOutput | None,
    duration_ms: int,
) -> None:
    """json and stream-json output: the ``result`` frame, last."""
    finished = outcome.finished
    assert finished is not None
    ended = outcome.api_error if finished.stop_reason == "error" else None
    result = writer.result_frame(
        finished, duration_ms=duration_ms, errors=outcome.errors, api_error=ended
    )
    if structured is not None:
        structured.add_to_result(result)
    writer.finish(result)


def _exit_code(finished: TurnFinished, structured: StructuredOutput | None) -> int:
    if structured is not None and structured.exhausted:
        return 1
    if finished.stop_reason == "aborted":
        return 130
    if structured is not None and not structured.provided:
        return 1  # no structured output: a script must not take the text for it
    is_error = finished.is_error or finished.stop_reason in ("max_turns", "aborted", "max_budget")
    return 1 if is_error else 0


def _warn_untrusted(session: Any, options: RunOptions, err: TextIO) -> str | None:
    """Print mode never asks about folder trust, so what it withheld goes to stderr in every
    output format (text mode already prints the session's warnings there, as notices).
    Returns the message printed, so the same session warning is not printed twice."""
    withheld = getattr(getattr(session, "settings", None), "withheld", None)
    if withheld is not None and options.output_format != "text":
        message: str = withheld.message()
        print(f"nerve: {message}", file=err, flush=True)
        return message
    return None


def run_print_mode(
    options: RunOptions, *, stdin: TextIO | None = None, out: TextIO | None = None
) -> int:
    from agent_cli.frontends.print.input import read_prompt
    from agent_cli.transcripts.transcript import data_dir

    stdin = stdin or sys.stdin
    out = out or sys.stdout
    got = read_prompt(options.prompt, stdin, data_dir=data_dir)
    for warning in got.warnings:
        print(f"nerve: {warning}", file=sys.stderr, flush=True)
    prompt = got.prompt
    if not prompt:
        print("nerve: -p needs a prompt (as an argument or on stdin)", file=sys.stderr)
        return 2
    tool = options.permission_prompt_tool
    if tool is not None and not is_mcp_prompt_tool(tool):
        print(
            f"nerve: --permission-prompt-tool {tool!r}: in print mode it names an MCP tool "
            "(mcp__server__tool); 'stdio' is for --input-format stream-json",
            file=sys.stderr,
        )
        return 2
    return asyncio.run(_run(options, prompt, out, sys.stderr))
