"""The TUI as a slash-command host: commands print into the conversation and may open pickers.

``TuiSlashHost`` is a part of ``NerveApp`` (``app.slash_host``): the app runs a command with
``run``, a ``# note`` with ``remember``, and completes command names from ``descriptions``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.slash.custom import remember_note
from agent_cli.tui.widgets.conversation import stored_entries

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort
    from agent_cli.tui.app import NerveApp

__all__ = ["TuiSlashHost", "works_without_session"]


class TuiSlashHost:
    """:class:`agent_cli.slash.registry.SlashHost` over a running :class:`NerveApp`."""

    interactive = True

    def __init__(self, app: NerveApp) -> None:
        self.app = app

    async def run(self, name: str, args: str) -> None:
        """Run ``/name args`` in the app (its session's own commands included)."""
        from agent_cli.slash.builtin import registry_for

        await registry_for(self).run(self, name, args)

    async def remember(self, text: str) -> None:
        """``# note``: pick a memory file, append the note."""
        await remember_note(self, text)

    def descriptions(self) -> dict[str, str]:
        """Each command's description, by name (the session's own commands included)."""
        # the built-in commands (~25 modules) load on first use, not before the first frame
        from agent_cli.slash.builtin import registry_for

        return registry_for(self).descriptions()

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
        app = self.app
        try:
            messages = await app.session.resume(session_id)
        except Exception as exc:
            app.say(f"Could not resume {session_id}: {exc}", "error")
            return
        await app.conversation.load(stored_entries(app, messages))
        app.say(f"Resumed session {app.session.session_id}.")  # a copy, if another has it
        app.refresh_status()

    async def choose_session(self, sessions: list[dict[str, Any]]) -> None:
        from agent_cli.tui.screens.resume import ResumeScreen

        app = self.app

        def chosen(session_id: str | None) -> None:
            if session_id:
                app.run_worker(self.resume_session(session_id), group="resume")

        app.push_screen(ResumeScreen(sessions), chosen)

    def exit(self, code: int = 0) -> None:
        self.app.exit(code)

    def open_view(self, name: str) -> bool:
        """``/config`` and ``/permissions``: the app's screens for them."""
        from agent_cli.tui.screens.settings import open_view

        return open_view(self.app, name)

    async def submit_prompt(self, text: str) -> None:
        self.app.turns.submit(text)

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
        if self.app.turns.running:
            await events.aclose()  # type: ignore[attr-defined]  # never started: nothing runs
            self.app.say("Wait for the running turn to finish (or press Esc), then retry.", "error")
            return
        self.app.turns.run_events(events)

    async def choose_rewind(self, points: list[Any]) -> None:
        from agent_cli.tui.screens.rewind import RewindChoice, RewindScreen, apply_rewind

        app = self.app
        if app.turns.running:
            app.say("Wait for the running turn to finish (or press Esc), then /rewind.", "error")
            return

        def chosen(choice: RewindChoice | None) -> None:
            if choice is not None:
                app.run_worker(apply_rewind(app, choice), group="rewind")

        app.push_screen(RewindScreen(points, app.session.rewind_preview), chosen)


def works_without_session(name: str) -> bool:
    """Commands such as /help and /exit run while the session is still starting."""
    from agent_cli.slash.builtin import default_registry

    command = default_registry().get(name)
    return command is not None and not command.needs_session
