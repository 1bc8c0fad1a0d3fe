"""Where a line the user sends goes: a slash command, ``!shell``, a ``# note`` for memory, or a
prompt for the model.

``PromptRouter`` is a part of ``NerveApp``. Lines sent before the session is ready wait in it
(``send_pending`` once it is; ``drop_pending`` if it failed), except the commands that need no
session (/help, /exit). Big pastes are whole in what runs (``tui/widgets/paste.py``); a prompt
expands in ``TurnRunner.start``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_cli.slash.custom import is_memory_note
from agent_cli.slash.registry import parse_slash
from agent_cli.tui.slash_host import works_without_session
from agent_cli.tui.widgets.items import ToolCall

if TYPE_CHECKING:
    from agent_cli.tui.app import NerveApp

__all__ = ["PromptRouter"]


class PromptRouter:
    """``submitted`` takes a line from the prompt; ``send_pending``/``drop_pending`` settle the
    lines that waited for the session."""

    def __init__(self, app: NerveApp) -> None:
        self._app = app
        self._pending: list[str] = []  # submitted before the session was ready

    async def submitted(self, text: str) -> None:
        """The user sent ``text``: it joins the history, then runs (or waits for the session)."""
        app = self._app
        app.prompt_input.clear()
        app.prompt_input.remember(text)
        app.history.append(text)
        slash = parse_slash(text)
        if app.session_ready or (slash is not None and works_without_session(slash[0])):
            await self._dispatch(text)
        elif app.startup_error is not None:
            app.say(f"No session: {app.startup_error} (/exit to quit)", "error")
        else:
            self._pending.append(text)
            app.say(f"Queued until the session is ready: {text.splitlines()[0][:80]}")

    async def send_pending(self) -> None:
        """The session is ready: run what was sent before, in order."""
        pending, self._pending = self._pending, []
        for text in pending:
            await self._dispatch(text)

    def drop_pending(self) -> int:
        """The session failed: forget what waited for it; returns how many lines that was."""
        dropped, self._pending = len(self._pending), []
        return dropped

    async def _dispatch(self, text: str) -> None:
        app = self._app
        whole = app.prompt_input.pasted_texts.expand(text)
        slash = parse_slash(whole)
        if slash is not None:
            await app.slash_host.run(*slash)
        elif whole.startswith("!") and whole[1:].strip():
            self._run_shell(whole[1:].strip())
        elif is_memory_note(whole):
            await app.slash_host.remember(whole)
        else:
            app.turns.submit(text)

    def _run_shell(self, command: str) -> None:
        self._app.run_worker(self._shell(command), name="shell", group="shell")

    async def _shell(self, command: str) -> None:
        app = self._app
        widget = ToolCall("shell", f"! {command}")
        await app.conversation.add(widget)
        try:
            output = await app.session.run_shell(command)
        except Exception as exc:
            widget.finish(f"{type(exc).__name__}: {exc}", True)
            return
        widget.finish(output, False)
