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
from pathlib import Path
from typing import Any, TextIO

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

__all__ = ["event_to_json", "run_print_mode"]


def event_to_json(event: AgentEvent) -> dict[str, Any]:
    """One stream-json line: the event's fields plus ``type`` (snake_case class name)."""
    name = type(event).__name__
    snake = "".join(("_" + c.lower()) if c.isupper() else c for c in name).lstrip("_")
    data = dataclasses.asdict(event)
    return {"type": snake, **data}


async def _run(options: RunOptions, prompt: str, out: TextIO, err: TextIO) -> int:
    from agent_cli.model.config import MissingApiKey
    from agent_cli.session.agent_session import AgentSession, SessionError

    started = time.perf_counter()
    command = None
    if prompt.lstrip().startswith("/"):  # the slash registry costs start-up time: only then
        from agent_cli.frontends.print.slash import find_command, run_print_command

        command = find_command(prompt)
    if command is not None and not command[0].needs_session:
        return await run_print_command(options, command[0], command[1], None, out, err)
    structured = None
    if options.json_schema is not None:
        from agent_cli.frontends.print.structured_output import for_option

        try:
            structured = for_option(options.json_schema, Path.cwd())
        except ValueError as exc:
            print(f"nerve: {exc}", file=err)
            return 1
    try:
        session = AgentSession.create(options, interactive=False)
    except MissingApiKey as exc:
        print(f"nerve: {exc}", file=err)
        return 1
    except (SessionError, ValueError) as exc:
        print(f"nerve: {exc}", file=err)
        return 1
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
    if command is not None:  # Ctrl+C cancels a long one (/compact) as it would a turn
        try:
            return await run_print_command(options, command[0], command[1], session, out, err)
        finally:
            await session.close()

    finished: TurnFinished | None = None
    errors: list[str] = []
    api_error: tuple[int | None, str | None] | None = None  # the API error that ended the turn
    writer = None
    if options.output_format in ("stream-json", "json"):
        writer = StreamJsonWriter(
            out,
            partial=options.include_partial_messages,
            frames=options.output_format == "stream-json",
        )
        writer.attach(session)
        writer.begin_turn()
    try:
        turns = session.run_turn(prompt) if structured is None else structured.run(session, prompt)
        async for event in turns:
            if writer is not None:
                writer.event(event)
            if isinstance(event, RetryEvent) and event.fallback_model:  # said in every format
                print(for_stream(f"nerve: {event.reason}", err), file=err, flush=True)
            elif isinstance(event, (Notice, RetryEvent)) and options.output_format == "text":
                text = (
                    event.text
                    if isinstance(event, Notice)
                    else (
                        f"retrying in {event.delay_s:.1f}s (attempt {event.attempt}): {event.reason}"
                    )
                )
                print(for_stream(f"nerve: {text}", err), file=err, flush=True)
            elif isinstance(event, Notice) and event.level == "warning":
                # json keeps stdout to its one result object; a warning (a settings file that
                # is ignored, ...) must still reach the user.
                if options.output_format != "text" and event.text != told:
                    print(for_stream(f"nerve: {event.text}", err), file=err, flush=True)
            elif isinstance(event, CompactProgress) and (
                event.final or (event.stage == "started" and options.output_format == "text")
            ):
                print(for_stream(f"nerve: {event.text}", err), file=err, flush=True)
            if isinstance(event, ErrorEvent):
                errors.append(event.message)
                if event.status is not None:
                    api_error = (event.status, event.error_type)
                if options.output_format == "text":
                    print(for_stream(f"nerve: error: {event.message}", err), file=err, flush=True)
            elif isinstance(event, TurnFinished):
                finished = event
    finally:
        await session.close()

    assert finished is not None
    is_error = finished.is_error or finished.stop_reason in ("max_turns", "aborted", "max_budget")
    exhausted = structured is not None and structured.exhausted
    duration_ms = int((time.perf_counter() - started) * 1000)
    if options.output_format == "text":
        if structured is not None and structured.provided:
            print(json.dumps(structured.value, ensure_ascii=False), file=out)
        elif exhausted:
            assert structured is not None
            print(f"nerve: error: {structured.failure()}", file=err)
        elif finished.result_text:
            print(for_stream(finished.result_text, out), file=out)
    else:
        assert writer is not None
        ended = api_error if finished.stop_reason == "error" else None
        result = writer.result_frame(
            finished, duration_ms=duration_ms, errors=errors, api_error=ended
        )
        if structured is not None:
            structured.add_to_result(result)
        writer.finish(result)
    if exhausted:
        return 1
    if finished.stop_reason == "aborted":
        return 130
    if structured is not None and not structured.provided:
        return 1  # no structured output: a script must not take the text for it
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
