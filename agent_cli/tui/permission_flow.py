"""The app's questions to the user, in modals one at a time, each once the user has paused
typing (a prompt must not pop up under keys meant for the input); and what the app does with
the answer to a permission prompt after the modal closes.

A plain No (or Esc) on the main thread's prompt ends the turn, as in Claude Code: the model is
not asked again, the user says what to do instead. No with feedback (Tab) lets the turn go on
with the feedback. The user reads "Rejected" under the call, not the text written for the model.

The modals' modules load on first use, not before the first frame.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from agent_cli.tui.bell import ring_bell

if TYPE_CHECKING:
    from agent_cli.session.trust import TrustQuestion
    from agent_cli.tui.app import NerveApp
    from tools.context import PermissionPrompt, PermissionResponse

__all__ = ["PermissionFlow"]


class PermissionFlow:
    """``ask_permission`` and ``ask_questions`` are the session's handlers; ``approve_project_servers``
    asks about a project's MCP servers, ``resolve_trust`` about the folder. ``rejected_text`` is
    what the user reads as the result of a call they rejected.

    ``typing_pause_s`` and ``guard_s`` are the keystroke guard: how long the user must not have
    typed before a modal opens, and how long after it opens its keys are ignored.
    """

    def __init__(self, app: NerveApp, *, typing_pause_s: float, guard_s: float) -> None:
        self._app = app
        self._typing_pause_s = typing_pause_s
        self._guard_s = guard_s
        self._one_at_a_time = asyncio.Lock()
        self._rejections: dict[str, str] = {}  # tool_use_id -> the user's feedback ("" if none)

    async def ask_permission(self, prompt: PermissionPrompt) -> PermissionResponse:
        """The session's permission handler: wait for a pause in typing, then ask."""
        from agent_cli.tui.screens.permission import ask_in_modal

        async with self._one_at_a_time:
            await self._typing_paused()
            with self._app.working.hidden():
                response, session_edits = await ask_in_modal(self._app, prompt, self._guard_s)
        self._settle(prompt, response, session_edits=session_edits)
        return response

    async def ask_questions(self, prompt: Any) -> Any:
        """AskUserQuestion's handler: the question modal (``agent_cli.tui.screens.question``)."""
        from agent_cli.tui.screens.question import ask_questions_in_modal

        ring_bell(self._app)
        with self._app.working.hidden():
            async with self._one_at_a_time:
                await self._typing_paused()
                return await ask_questions_in_modal(self._app, prompt, self._guard_s)

    async def approve_project_servers(self) -> None:
        """Ask about the project's MCP servers (.mcp.json) nobody approved yet."""
        from agent_cli.slash.mcp_approval import ask_project_servers

        async with self._one_at_a_time:
            await self._typing_paused()
            await ask_project_servers(self._app.slash_host)

    async def resolve_trust(self, question: TrustQuestion) -> None:
        """Ask whether to trust the project folder, before the session is built; record a Yes."""
        from agent_cli.tui.screens.trust import ask_trust_in_modal, settle_trust

        async with self._one_at_a_time:
            await self._typing_paused()
            trusted = await ask_trust_in_modal(self._app, question, self._guard_s)
        if not trusted and question.message:
            self._app.event_view.skip_notice(question.message)  # the session repeats it
        for text, level in await settle_trust(question, trusted):
            self._app.say(text, level)

    def rejected_text(self, tool_use_id: str) -> str | None:
        """What the user reads as the result of a call they rejected (None if they did not)."""
        feedback = self._rejections.pop(tool_use_id, None)
        if feedback is None:
            return None
        return f"Rejected: {feedback}" if feedback else "Rejected"

    async def _typing_paused(self) -> None:
        """Return once the user has not typed for ``typing_pause_s``."""
        input_ = self._app.prompt_input
        while (idle := time.monotonic() - input_.last_key_time) < self._typing_pause_s:
            await asyncio.sleep(self._typing_pause_s - idle)

    def _settle(
        self, prompt: PermissionPrompt, response: PermissionResponse, *, session_edits: bool
    ) -> None:
        """Act on ``response`` before it returns to the pipeline; ``session_edits``: the user
        chose "allow all edits during this session", which is accept-edits mode (shown in the
        status line; Shift+Tab leaves it), as in Claude Code.

        The abort is set before the answer returns, so the rejected call's result is the
        rejection (the model learns it next turn), not "cancelled"; calls after it do not run.
        """
        from tools.context import PermissionAnswer

        if response.answer is PermissionAnswer.DENY:
            self._rejected(prompt, response.feedback)
        if session_edits:
            self._allow_edits_for_the_session()
        if response.answer is PermissionAnswer.ALLOW_ALWAYS and response.rules:
            self._say_saved([str(r) for r in response.rules])

    def _rejected(self, prompt: PermissionPrompt, feedback: str | None) -> None:
        app = self._app
        self._rejections[prompt.tool_use_id] = (feedback or "").strip()
        main_thread = prompt.agent_id is None  # a sub-agent's prompt only denies that call
        if not feedback and main_thread and app.turns.running and app.session_ready:
            app.turns.abort()

    def _allow_edits_for_the_session(self) -> None:
        app = self._app
        if app.session_ready and app.session.mode == "default":
            app.session.set_mode("acceptEdits")
            app.say("Edits allowed for this session (accept edits mode; Shift+Tab to change)")
            app.refresh_status()

    def _say_saved(self, rules: list[str]) -> None:
        from agent_cli.tui.screens.permission import LOCAL_SETTINGS_FILE

        plural = "s" if len(rules) > 1 else ""
        text = f"Saved rule{plural} {', '.join(rules)} to {LOCAL_SETTINGS_FILE}"
        self._app.event_view.skip_notice(text)  # the session's own notice of the save
        self._app.say(text)
