"""Pipeline steps 7 and 12: the PreToolUse hooks before the permission, the PostToolUse (or
PostToolUseFailure) hooks after the result is budgeted.

The hooks themselves (configuration, matching, running, reading their output) live in
``tools.hooks``; these steps only hand them the call and fold their outcome into ``CallState``.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from pydantic import BaseModel

from tools.hooks.payloads import hook_tool_response
from tools.messages import ResultBlock, system_reminder
from tools.pipeline.rewrites import absorb_hook_rewrite, note_written_file, read_before
from tools.pipeline.types import MAX_ERROR_CHARS, CallState, until_abort
from tools.pipeline.validate import replace_input

__all__ = [
    "INTERRUPT_HOOK_SECONDS",
    "failure_hooks",
    "jsonable",
    "post_tool_hooks",
    "pre_tool_hooks",
]

# After Ctrl+C the user is waiting: a slow PostToolUseFailure hook must not hold the turn.
INTERRUPT_HOOK_SECONDS = 5.0


async def pre_tool_hooks(state: CallState) -> None:
    """7. PreToolUse hooks: a decision (used at step 8), rewritten input, context, stop."""
    hooks = state.ctx.hooks
    if hooks is None:
        return
    assert state.tool is not None
    outcome = await until_abort(
        hooks.pre_tool_use(
            tool_name=state.tool.name,
            tool_input=state.hook_input(),
            tool_use_id=state.call.id,
            permission_mode=state.ctx.permissions.mode.value,
        ),
        state.ctx.abort,
    )
    state.pre_hook = outcome
    for text in outcome.additional_context:
        state.pre_messages.append(system_reminder(f"PreToolUse:{state.tool.name} hook: {text}"))
    for text in outcome.system_messages:
        _notify(state, text)
    if outcome.stop:
        state.stop(outcome.stop_reason or "stopped by a PreToolUse hook")
    if outcome.updated_input is not None:
        # The rewritten input is what runs; step 8 judges it again by the rules.
        await replace_input(state, outcome.updated_input, source="PreToolUse hook")


def _notify(state: CallState, text: str) -> None:
    try:
        state.ctx.callbacks.notify(text)
    except Exception:
        pass  # a UI failure must not fail the call


def jsonable(data: Any) -> Any:
    """A tool's data as plain JSON values (for hooks and transcripts)."""
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(data, str | int | float | bool) or data is None:
        return data
    try:
        return json.loads(json.dumps(data, default=str))
    except (TypeError, ValueError):
        return str(data)


def _text(content: str | list[ResultBlock] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


async def post_tool_hooks(state: CallState) -> None:
    """12. PostToolUse (or PostToolUseFailure): MCP output replacement, context, stop."""
    hooks, tool = state.ctx.hooks, state.tool
    if hooks is None or tool is None:
        return
    mode = state.ctx.permissions.mode.value
    if state.is_error:
        failure = await until_abort(
            hooks.post_tool_use_failure(
                tool_name=tool.name,
                tool_input=state.hook_input(),
                tool_use_id=state.call.id,
                error=_text(state.content)[:MAX_ERROR_CHARS],
                permission_mode=mode,
            ),
            state.ctx.abort,
        )
        _absorb(state, failure, "PostToolUseFailure")
        return
    assert state.result is not None
    has_hooks = getattr(hooks, "has_hooks", None)
    formats = has_hooks is None or has_hooks("PostToolUse")
    written = note_written_file(state) if formats else None
    before = read_before(written)
    out = await until_abort(
        hooks.post_tool_use(
            tool_name=tool.name,
            tool_input=state.hook_input(),
            tool_response=hook_tool_response(
                tool.name, state.hook_input(), state.result.data, jsonable(state.result.data)
            ),
            tool_use_id=state.call.id,
            permission_mode=mode,
            duration_ms=int((time.perf_counter() - state.started) * 1000),
        ),
        state.ctx.abort,
    )
    if out.updated_output is not None and tool.is_mcp:
        updated = out.updated_output
        is_blocks = isinstance(updated, list) and all(
            isinstance(b, dict) and "type" in b for b in updated
        )
        if isinstance(updated, str) or is_blocks:
            state.content = updated
        else:
            state.content = json.dumps(updated, ensure_ascii=False)
    if written is not None:
        absorb_hook_rewrite(state, written, before)
    _absorb(state, out, "PostToolUse")


def _absorb(state: CallState, out: Any, event: str) -> None:
    name = state.tool_name
    if out.blocked:
        reason = out.block_reason or "blocked"
        state.post_messages.append(system_reminder(f"{event}:{name} hook blocked: {reason}"))
    for text in out.additional_context:
        state.post_messages.append(system_reminder(f"{event}:{name} hook: {text}"))
    for text in out.system_messages:
        _notify(state, text)
    if out.stop:
        state.stop(out.stop_reason or f"stopped by a {event} hook")


async def failure_hooks(state: CallState, *, interrupted: bool) -> None:
    """Step 14's hook: PostToolUseFailure for a call that failed while it ran (or was stopped)."""
    if state.ctx.hooks is None or state.tool is None:
        return
    try:
        out = await asyncio.wait_for(
            state.ctx.hooks.post_tool_use_failure(
                tool_name=state.tool.name,
                tool_input=state.hook_input(),
                tool_use_id=state.call.id,
                error=_text(state.content),
                permission_mode=state.ctx.permissions.mode.value,
                is_interrupt=interrupted,
            ),
            INTERRUPT_HOOK_SECONDS if interrupted else None,
        )
        _absorb(state, out, "PostToolUseFailure")
    except Exception:
        pass  # the hook runner reports its own failures; the call's error stands
