"""Claude Code's answer to a permission prompt, as the pipeline's response.

Both ways a headless run hands its prompts out answer with the same JSON object: the
permission prompt tool (``print.mcp_permissions``, in print and SDK mode) and the SDK's
``can_use_tool`` request (``sdk.permissions``). ``{"behavior": "allow", "updatedInput"}`` allows
the call (a changed input replaces it, to be parsed and validated again by the pipeline);
``{"behavior": "deny", "message"}`` denies it with that message; anything else denies (fails
closed).
"""

from __future__ import annotations

from typing import Any

__all__ = ["response_for"]


def response_for(answer: Any, prompt: Any, who: str) -> Any:
    """Claude Code's permission answer (``{"behavior": "allow", "updatedInput"}`` or
    ``{"behavior": "deny", "message"}``) as the pipeline's response; anything else denies."""
    from tools.context import PermissionAnswer, PermissionResponse

    if not isinstance(answer, dict):
        answer = {}
    behavior = answer.get("behavior")
    if behavior == "allow":
        updated = answer.get("updatedInput")
        if isinstance(updated, dict) and updated != prompt.input:
            return PermissionResponse(PermissionAnswer.ALLOW, updated_input=updated)
        return PermissionResponse(PermissionAnswer.ALLOW)
    message = answer.get("message") if behavior == "deny" else None
    if not isinstance(message, str) or not message.strip():
        message = (
            f"{who} denied this call."
            if behavior == "deny"
            else f"{who}'s answer had no valid behavior ({behavior!r}): denied."
        )
    return PermissionResponse(PermissionAnswer.DENY, feedback=message)
