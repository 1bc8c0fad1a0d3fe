"""``agent`` hooks (Claude Code's type): a read-only sub-agent checks a condition.

The hook's prompt (with the event JSON) is the task of a child ``AgentLoop`` that may use only
Read, Glob and Grep, in ``dontAsk`` mode (no prompt can reach the user; deny rules still apply),
with no hooks of its own (an agent hook on Read would otherwise call itself). Its final answer is
parsed as the ``{"ok": ..., "reason": ...}`` verdict by ``tools.hooks.verdict``; the
hook's ``timeout`` (default 60 s) bounds the whole run. The model is the hook's ``model``, else
the fast model; its tokens join the session's usage.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_cli.loop.agent_loop import AgentLoop, LoopConfig, ModelPort, SessionLinks
from agent_cli.loop.events import ErrorEvent, TurnFinished
from agent_cli.model.names import expand_alias, small_fast_model
from permissions.types import PermissionMode
from tools.context import ToolUseContext, create_subagent_context

if TYPE_CHECKING:
    from agent_cli.model.usage import SessionUsage

__all__ = ["AGENT_HOOK_SYSTEM", "HOOK_AGENT_TOOLS", "LoopHookAgent"]

HOOK_AGENT_TOOLS = frozenset({"Read", "Glob", "Grep"})
_MAX_TURNS = 50
AGENT_HOOK_SYSTEM = (
    "You are verifying a condition for a hook in Nerve, a coding agent. You are given the hook's "
    "instructions and the JSON input of the event it runs on. You may inspect the project with "
    "the Read, Glob and Grep tools (read-only; nothing else is available). Working directory: "
    "{cwd}\n"
    "When you have decided, answer with ONLY one JSON object, no markdown and nothing around it: "
    '{{"ok": true}} when the condition is met, or {{"ok": false, "reason": "why, and what to do '
    'instead"}} when it is not.'
)


class LoopHookAgent:
    """``tools.hooks.verdict.HookAgent`` on child loops of the session's client."""

    def __init__(
        self,
        *,
        model_client: ModelPort,
        context: Callable[[], ToolUseContext],
        usage: SessionUsage | None = None,
    ) -> None:
        self._model = model_client
        self._context = context
        self._usage = usage

    async def evaluate(self, prompt: str, *, model: str | None = None) -> str:
        """Run the read-only agent on ``prompt``; its final text (raises on a failed run)."""
        parent = self._context()
        environ = parent.options.environ
        tools = [t for t in parent.options.tools if set(t.all_names) & HOOK_AGENT_TOOLS]
        system = AGENT_HOOK_SYSTEM.format(cwd=parent.cwd)
        ctx = create_subagent_context(
            parent,
            agent_id=f"hook-{uuid.uuid4().hex[:12]}",
            system_prompt=system,
            tools=tools,
            bubble_permissions=False,
        )
        ctx = dataclasses.replace(
            ctx,
            permissions=dataclasses.replace(ctx.permissions, mode=PermissionMode.DONT_ASK),
            hooks=None,
        )
        loop = AgentLoop(
            model=self._model,
            model_name=expand_alias(model, environ) if model else small_fast_model(environ),
            ctx=ctx,
            system_prompt=system,
            config=LoopConfig(max_turns=_MAX_TURNS),
            links=SessionLinks(usage=self._usage),
        )
        return await _final_text(loop, prompt)


async def _final_text(loop: AgentLoop, prompt: str) -> str:
    errors: list[str] = []
    finished: TurnFinished | None = None
    try:
        async for event in loop.run_turn(prompt):
            if isinstance(event, ErrorEvent):
                errors.append(event.message)
            elif isinstance(event, TurnFinished):
                finished = event
    except BaseException:
        loop.abort("hook timed out or was cancelled")
        raise
    if finished is None or finished.is_error:
        detail = "; ".join(errors) or (finished.stop_reason if finished else "no answer")
        raise RuntimeError(f"the hook's agent failed ({detail})")
    return finished.result_text
