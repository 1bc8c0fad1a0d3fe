"""The TUI as a slash-command host: commands print into the conversation and may open pickers."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.slash.custom import is_memory_note, registry_for, remember_note

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort
    from agent_cli.tui.app import NerveApp

__all__ = [
    "TuiSlashHost",
    "is_memory_note",
    "run_memory_note",
    "run_slash",
    "slash_descriptions",
    "works_without_session",
]


class TuiSlashHost:
    """:class:`agent_cli.slash.registry.SlashHost` over a running :class:`NerveApp`."""

    interactive = True

    def __init__(self, app: NerveApp) -> None:
        self.app = app

    @property
    def session(self) -> SessionPort:
        return self.app.session

    @property
    def bypass_available(self) -> bool:
        return self.app.bypass_available

    def say(self, text: str, level: str = "info") -> None:
        self.app.say(text, level)

    def refresh_status(self) -> None:
        self.app.refresh_status()

    async def clear_conversation(self) -> None:
        self.app.session.clear()
        await self.app.conversation.clear_log()

    async def resume_session(self, session_id: str) -> None:
        await self.app.resume_session(session_id)

    async def choose_session(self, sessions: list[dict[str, Any]]) -> None:
        from agent_cli.tui.screens.resume import ResumeScreen

        app = self.app

        def chosen(session_id: str | None) -> None:
            if session_id:
                app.run_worker(app.resume_session(session_id), group="resume")

        app.push_screen(ResumeScreen(sessions), chosen)

    def exit(self, code: int = 0) -> None:
        self.app.exit(code)

    def open_view(self, name: str) -> bool:
        """``/config`` and ``/permissions``: the app's screens for them."""
        from agent_cli.tui.screens.settings import open_view

        return open_view(self.app, name)

    async def submit_prompt(self, text: str) -> None:
        app = self.app
        if app.turn_running:
            app.queued.append(text)
            app.say(f"Queued: {text.splitlines()[0][:80]}")
        else:
            app.start_turn(text)

    def choose(
        self,
        title: str,
        options: list[str],
        then: Callable[[int | None], Awaitable[None]],
        initial: int = 0,
    ) -> None:
        from agent_cli.tui.screens.picker import ChoiceScreen

        app = self.app

        def chosen(index: int | None) -> None:
            app.run_worker(then(index), group="choice")

        app.push_screen(ChoiceScreen(title, options, initial), chosen)

    async def edit_file(self, path: Path) -> str | None:
        """The editor gets the terminal (the app suspends); without a terminal to hand over
        (a test's headless app) it runs with no input, as a script would."""
        from textual.app import SuspendNotSupported

        editor = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
        argv = [*shlex.split(editor), str(path)]
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            try:
                with self.app.suspend():
                    code = subprocess.run(argv, check=False).returncode
            except SuspendNotSupported:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                code = await proc.wait()
        except OSError as exc:
            return f"cannot run {editor!r}: {exc.strerror or exc}"
        return None if code == 0 else f"{editor} exited with status {code}"

    async def stream(self, events: AsyncIterator[Any]) -> None:
        if self.app.turn_running:
            await events.aclose()  # type: ignore[attr-defined]  # never started: nothing runs
            self.app.say("Wait for the running turn to finish (or press Esc), then retry.", "error")
            return
        self.app.run_events(events)

    async def choose_rewind(self, points: list[Any]) -> None:
        from agent_cli.tui.screens.rewind import RewindChoice, RewindScreen, apply_rewind

        app = self.app
        if app.turn_running:
            app.say("Wait for the running turn to finish (or press Esc), then /rewind.", "error")
            return

        def chosen(choice: RewindChoice | None) -> None:
            if choice is not None:
                app.run_worker(apply_rewind(app, choice), group="rewind")

        app.push_screen(RewindScreen(points, app.session.rewind_preview), chosen)


async def run_slash(app: NerveApp, name: str, args: str) -> None:
    """Run ``/name args`` in the app (its session's own commands included)."""
    host = TuiSlashHost(app)
    await registry_for(host).run(host, name, args)


async def run_memory_note(app: NerveApp, text: str) -> None:
    """``# note``: pick a memory file, append the note."""
    await remember_note(TuiSlashHost(app), text)


def slash_descriptions(app: NerveApp | None = None) -> dict[str, str]:
    # the built-in commands (~25 modules) load on first use, not before the first frame
    from agent_cli.slash.builtin import default_registry

    if app is None:
        return default_registry().descriptions()
    return registry_for(TuiSlashHost(app)).descriptions()


def works_without_session(name: str) -> bool:
    """Commands such as /help and /exit run while the session is still starting."""
    from agent_cli.slash.builtin import default_registry

    command = default_registry().get(name)
    return command is not None and not command.needs_session
