"""``--permission-prompt-tool mcp__server__tool``: an MCP tool answers the permission prompts of
a headless run (``nerve -p`` or the SDK mode), as Claude Code does.

Only what would ask reaches the tool: deny rules, safety checks and the mode were applied by the
pipeline first. The tool is called with ``{"tool_name", "input", "tool_use_id"}`` and answers
text holding Claude Code's JSON decision (``{"behavior": "allow", "updatedInput"}`` or
``{"behavior": "deny", "message"}``); a changed input is parsed and validated again by the
pipeline. A missing tool, a failing call, an error result or an answer that is not such a JSON
object denies the call (fails closed), with the reason given to the model.
"""

from __future__ import annotations

import json
from typing import Any

from agent_cli.frontends.print.permission_answer import response_for
from agent_cli.slash.views import content_text

__all__ = ["McpPermissionPrompt"]


class McpPermissionPrompt:
    """The session's permission handler when an MCP tool answers prompts."""

    def __init__(self, session: Any, tool_name: str) -> None:
        self.session = session
        self.tool_name = tool_name

    def _deny(self, why: str) -> Any:
        from tools.context import PermissionAnswer, PermissionResponse

        return PermissionResponse(
            PermissionAnswer.DENY,
            feedback=f"Permission was not granted: the permission prompt tool {self.tool_name} {why}",
        )

    async def __call__(self, prompt: Any) -> Any:
        tool = self.session.mcp_tool(self.tool_name)
        if tool is None:
            return self._deny("is not available (is its MCP server configured and connected?)")
        args = {
            "tool_name": prompt.tool_name,
            "input": prompt.input,
            "tool_use_id": prompt.tool_use_id,
        }
        try:
            result = await tool.call(
                tool.input_model.model_validate(args), self.session.ctx, _quiet
            )
            text = content_text(result.data).strip()
        except Exception as exc:  # the tool's failure is a refusal, never an allow
            return self._deny(f"failed: {exc}")
        if result.is_error:
            return self._deny(f"returned an error: {text[:300]}")
        try:
            answer = json.loads(text)
        except ValueError:
            answer = None
        if not isinstance(answer, dict) or answer.get("behavior") not in ("allow", "deny"):
            return self._deny(f"answered {text[:200]!r}, not a permission decision")
        return response_for(answer, prompt, f"The permission prompt tool {self.tool_name}")


def _quiet(_progress: Any) -> None:
    pass
