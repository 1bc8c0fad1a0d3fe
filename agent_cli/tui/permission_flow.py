"""What the app does with the user's answer to a permission prompt, after the modal closes.

A plain No (or Esc) on the main thread's prompt ends the turn, as in Claude Code: the model is
not asked again, the user says what to do instead. No with feedback (Tab) lets the turn go on
with the feedback. The user reads "Rejected" under the call, not the text written for the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_cli.tui.screens.permission import LOCAL_SETTINGS_FILE
from tools.context import PermissionAnswer, PermissionPrompt, PermissionResponse

if TYPE_CHECKING:
    from agent_cli.tui.app import NerveApp

__all__ = ["rejected_text", "settle_answer"]


def settle_answer(
    app: NerveApp,
    prompt: PermissionPrompt,
    response: PermissionResponse,
    *,
    session_edits: bool = False,
) -> None:
    """Act on ``response`` before it returns to the pipeline; ``session_edits``: the user
    chose "allow all edits during this session", which is accept-edits mode (shown in the
    status line; Shift+Tab leaves it), as in Claude Code.

    The abort is set before the answer returns, so the rejected call's result is the
    rejection (the model learns it next turn), not "cancelled"; calls after it do not run.
    """
    if response.answer is PermissionAnswer.DENY:
        app.rejections[prompt.tool_use_id] = (response.feedback or "").strip()
        main_thread = prompt.agent_id is None  # a sub-agent's prompt only denies that call
        if not response.feedback and main_thread and app.turn_running and app.session_ready:
            app.session.abort()
            app.mark_interrupted()
    if session_edits and app.session_ready and app.session.mode == "default":
        app.session.set_mode("acceptEdits")
        app.say("Edits allowed for this session (accept edits mode; Shift+Tab to change)")
        app.refresh_status()
    if response.answer is PermissionAnswer.ALLOW_ALWAYS and response.rules:
        names = ", ".join(str(r) for r in response.rules)
        plural = "s" if len(response.rules) > 1 else ""
        text = f"Saved rule{plural} {names} to {LOCAL_SETTINGS_FILE}"
        app.said.add(text)  # the session's own notice of the save is not shown twice
        app.say(text)


def rejected_text(app: NerveApp, tool_use_id: str) -> str | None:
    """What the user reads as the result of a call they rejected (None if they did not)."""
    feedback = app.rejections.pop(tool_use_id, None)
    if feedback is None:
        return None
    return f"Rejected: {feedback}" if feedback else "Rejected"
