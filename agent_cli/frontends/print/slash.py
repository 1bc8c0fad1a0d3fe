"""``nerve -p "/name args"``: a registered slash command runs here instead of going to the model.

Print mode is a host without a screen: commands that need one (a picker, ``/clear``, ``/exit``)
are refused with a clear message. A ``/word`` that names no registered command is not a
command here: it goes to the model as the prompt it is (``/usr/bin/python fails`` is a question);
so do prompt commands (``/init``, a project's ``/review 123``), which the session expands.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from agent_cli.frontends.print.tty_text import for_stream
from agent_cli.options import RunOptions
from agent_cli.slash.builtin import default_registry
from agent_cli.slash.registry import SlashCommand, parse_slash

__all__ = ["PrintSlashHost", "find_command", "run_print_command"]


def find_command(prompt: str) -> tuple[SlashCommand, str] | None:
    """The registered command a print-mode prompt names, with its arguments."""
    slash = parse_slash(prompt)
    if slash is None:
        return None
    command = default_registry().get(slash[0])
    if command is None or command.expands_to_prompt:
        return None  # a prompt for the model (/init, custom commands): the session expands it
    return command, slash[1]


class PrintSlashHost:
    """Collects what a command says; refuses what needs a screen."""

    interactive = False
    bypass_available = False

    def __init__(self, session: Any, writer: Any = None) -> None:
        self._session = session
        self.lines: list[tuple[str, str]] = []
        self.writer = writer  # stream-json: a long operation's events become frames too

    @property
    def session(self) -> Any:
        if self._session is None:
            raise RuntimeError("this command needs a session")
        return self._session

    def say(self, text: str, level: str = "info") -> None:
        self.lines.append((level, text))

    def refresh_status(self) -> None:
        pass

    async def clear_conversation(self) -> None:
        self.say("/clear works only in the interactive app.", "error")

    async def resume_session(self, session_id: str) -> None:
        self.say("Use nerve -p --resume ID to continue a session in print mode.", "error")

    async def choose_session(self, sessions: list[dict[str, Any]]) -> None:
        self.say("Use nerve -p --resume ID to continue a session in print mode.", "error")

    def exit(self, code: int = 0) -> None:
        pass

    async def submit_prompt(self, text: str) -> None:
        # Prompt commands never get here: print mode runs them as the turn (find_command).
        self.say(f"{text.split()[0]} runs as the prompt of nerve -p", "error")

    def choose(
        self,
        title: str,
        options: list[str],
        then: Callable[[int | None], Awaitable[None]],
        initial: int = 0,
    ) -> None:
        self.say(f"{title} needs the interactive app.", "error")

    async def edit_file(self, path: Path) -> str | None:
        return "editing needs the interactive app"

    async def stream(self, events: AsyncIterator[Any]) -> None:
        """A long operation (``/compact``): its outcome and warnings; a compaction that did
        not happen (failed, blocked, cancelled) is an error, so the exit status says so."""
        from agent_cli.loop.events import CompactProgress, ErrorEvent, Notice

        async for event in events:
            if self.writer is not None:
                self.writer.event(event)
            if isinstance(event, CompactProgress) and event.final:
                ok = event.stage in ("done", "nothing")
                self.say(event.text, "info" if ok else "error")
            elif isinstance(event, Notice):
                self.say(event.text, "warning" if event.level == "warning" else "info")
            elif isinstance(event, ErrorEvent):
                self.say(event.message, "error")

    async def choose_rewind(self, points: list[Any]) -> None:
        self.say("/rewind works only in the interactive app.", "error")

    @property
    def failed(self) -> bool:
        return any(level == "error" for level, _ in self.lines)

    def text(self) -> str:
        return "\n".join(text for _, text in self.lines)


async def run_print_command(
    options: RunOptions,
    command: SlashCommand,
    args: str,
    session: Any,
    out: TextIO,
    err: TextIO,
) -> int:
    """Run the command, print its output in the requested format; 1 when it reported an error."""
    from agent_cli.frontends.stream_json.result import local_command_frame, now_iso
    from agent_cli.frontends.stream_json.writer import StreamJsonWriter

    started = time.perf_counter()
    writer = None
    if options.output_format == "stream-json" and session is not None:
        writer = StreamJsonWriter(out)
        writer.attach(session)
        writer.begin_turn()
    host = PrintSlashHost(session, writer)
    await default_registry().run(host, command.name, args)
    if options.output_format == "text":
        for level, text in host.lines:
            if level in ("error", "warning"):
                print(for_stream(f"nerve: {text}", err), file=err)
            else:
                print(for_stream(text, out), file=out)
    else:
        duration_ms = int((time.perf_counter() - started) * 1000)
        result = local_command_frame(
            session, command.name, host.text(), failed=host.failed, duration_ms=duration_ms
        )
        if writer is None:
            print(json.dumps(result, default=str), file=out, flush=True)
        else:  # as Claude Code: the command's output echoed as a user message, then the result
            writer.ensure_init()
            said = f"<local-command-stdout>{host.text()}</local-command-stdout>"
            echo = writer.frame(
                "user",
                message={"role": "user", "content": said},
                parent_tool_use_id=None,
                timestamp=now_iso(),
                isReplay=True,
                local_command_run={"command": command.name, "args": args},
            )
            writer.write(echo)
            writer.finish(result)
    return 1 if host.failed else 0
