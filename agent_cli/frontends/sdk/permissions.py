"""``--permission-prompt-tool stdio``: a permission "ask" becomes a ``can_use_tool`` request.

Only what would ask reaches the SDK: deny rules, safety checks and the mode were applied by
the pipeline before (a deny never asks). The answer ``{"behavior": "allow", "updatedInput"}``
allows the call; an ``updatedInput`` that differs from what was asked about replaces the input
and is parsed and validated again by the pipeline. ``{"behavior": "deny", "message"}`` denies
it with that message to the model (``print.permission_answer``, as for the permission prompt
tool). An error answer, a malformed one, or stdin closing denies (fails closed). An allow's
``updatedPermissions`` ("always allow": add a rule to the session or a settings file, set the
mode, add a directory) are applied to the session before the call runs
(``sdk.permission_updates``); the request's ``permission_suggestions`` are the engine's "don't
ask again" rules, the ones the TUI offers.

A call whose command (or title) holds control characters, escape sequences or invisible Unicode
characters is asked about with no suggestions, its ``title`` and ``decision_reason`` written
out (``tools.terminal_text.reveal``), and an allow's ``updatedPermissions`` are not applied:
as in the TUI, what a client shows of such a command is not what would be remembered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_cli.frontends.print.permission_answer import response_for
from agent_cli.frontends.sdk.control import ControlChannel, ControlError

__all__ = ["StdioPermissionPrompt", "hides_characters"]


class StdioPermissionPrompt:
    """The session's permission handler in SDK mode with ``--permission-prompt-tool stdio``."""

    def __init__(
        self,
        channel: ControlChannel,
        session: Any = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.channel = channel
        self.session = session  # where updatedPermissions go (None: not applied)
        self.warn = warn

    async def __call__(self, prompt: Any) -> Any:
        from tools.context import PermissionAnswer, PermissionResponse
        from tools.pipeline.permission import suggestion_updates
        from tools.terminal_text import reveal

        hidden = hides_characters(prompt)
        suggestions = (
            [] if hidden else suggestion_updates(getattr(prompt.verdict, "suggestions", ()) or ())
        )
        try:
            answer = await self.channel.request(
                "can_use_tool",
                tool_name=prompt.tool_name,
                input=prompt.input,
                tool_use_id=prompt.tool_use_id,
                permission_suggestions=suggestions,
                decision_reason=reveal(prompt.verdict.reason),
                title=reveal(prompt.title or prompt.tool_name),
                agent_id=prompt.agent_id,
            )
        except ControlError as exc:
            return PermissionResponse(
                PermissionAnswer.DENY, feedback=f"Permission was not granted: {exc}"
            )
        response = response_for(answer, prompt, "The SDK")
        updates = answer.get("updatedPermissions") if isinstance(answer, dict) else None
        if response.allowed and updates is not None and self.session is not None:
            from agent_cli.frontends.sdk.permission_updates import apply_updates

            notes = (
                ["updatedPermissions ignored: the command holds control or invisible characters"]
                if hidden
                else apply_updates(self.session, updates)
            )
            for note in notes:
                if self.warn is not None:
                    self.warn(note)
        return response


def hides_characters(prompt: Any) -> bool:
    """Does the call's command or title hold a character a terminal would not show as itself
    (a control character, an escape sequence, a bidi override...)?"""
    from tools.terminal_text import has_hidden

    command = (prompt.input or {}).get("command")
    texts = (prompt.title or "", command if isinstance(command, str) else "")
    return any(has_hidden(t) for t in texts)
