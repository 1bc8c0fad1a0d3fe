"""Pipeline steps 10–14: execute, budget the result, PostToolUse hooks, attach messages,
classify errors.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from pydantic import BaseModel

from tools.errors import ToolCancelled, ToolError, error_class
from tools.execution.budget import (
    content_size,
    empty_result_text,
    has_media,
    persist_result,
    preview_text,
    result_limit,
)
from tools.execution.file_watch import FileWatch, file_watch
from tools.execution.hook_payloads import hook_tool_response
from tools.execution.hook_rewrites import absorb_hook_rewrite, note_written_file, read_before
from tools.execution.pipeline_types import CallState, system_reminder, until_abort
from tools.result import ContentBlock
from tools.telemetry import TelemetryEvent, emit

__all__ = [
    "INTERRUPT_HOOK_SECONDS",
    "MAX_ERROR_CHARS",
    "attach_messages",
    "budget_result",
    "classify_error",
    "execute",
    "jsonable",
    "post_tool_hooks",
]

MAX_ERROR_CHARS = 2_000
INTERRUPT_HOOK_SECONDS = 5.0
# Steps after which a failure counts as the tool's own (PostToolUseFailure hooks run).
_EXECUTION_PHASES = frozenset({"execute", "budget_result"})


async def execute(state: CallState) -> None:
    """10. ``tool.call`` with the (possibly updated) original input; abort cancels it."""
    tool, ctx, call_id = state.tool, state.ctx, state.call.id
    assert tool is not None
    on_progress = ctx.callbacks.on_progress

    def progress(p: Any) -> None:
        try:
            on_progress(call_id, p)
        except Exception:
            pass  # a UI failure must not fail the tool

    watch = file_watch(ctx)
    token = await _before(watch, state) if watch is not None else None
    try:
        result = await until_abort(tool.call(state.parsed, ctx, progress), ctx.abort)
    finally:
        if watch is not None and token is not None:
            try:
                await watch.after_call(token)
            except Exception:
                pass  # checkpoints are a convenience: never the reason a call fails
    state.result = result
    state.is_error = bool(result.is_error)


async def _before(watch: FileWatch, state: CallState) -> object | None:
    """The file watcher's look before the call (``file_watch``); its failure is not the call's."""
    tool = state.tool
    assert tool is not None
    try:
        return await watch.before_call(tool, state.parsed, state.hook_input, state.ctx)
    except Exception:
        return None


async def budget_result(state: CallState) -> None:
    """11. Serialise; empty → a notice; over the tool's limit → persisted with a preview."""
    tool, result = state.tool, state.result
    assert tool is not None and result is not None
    content = tool.to_content(result.data)
    if (isinstance(content, str) and not content.strip()) or (
        isinstance(content, list) and not content
    ):
        content = empty_result_text(tool.name)
    limit = result_limit(tool.max_result_size_chars)
    if content_size(content) > limit and not has_media(content):
        try:
            persisted = persist_result(content, state.call.id, state.ctx.options.session_dir)
        except OSError as exc:
            # Cannot save it: keep a bounded preview inline rather than lose the call.
            text = content if isinstance(content, str) else json.dumps(content)
            preview, _ = preview_text(text, int(min(limit, 50_000)))
            content = f"{preview}\n... [output truncated; full output could not be saved: {type(exc).__name__}]"
        else:
            content = persisted.wrapper
            state.persisted_path = persisted.path
    state.content = content


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


def _text(content: str | list[ContentBlock] | None) -> str:
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
        try:
            state.ctx.callbacks.notify(text)
        except Exception:
            pass
    if out.stop:
        state.stop(out.stop_reason or f"stopped by a {event} hook")


async def attach_messages(state: CallState) -> None:
    """13. The tool's new messages (sub-agent transcript, reminders) and its context modifier."""
    result = state.result
    if result is None:
        return
    state.tool_messages.extend(result.new_messages)
    if result.context_modifier is not None:
        state.modifiers.append(result.context_modifier)


def _model_message(exc: BaseException, tool_name: str) -> str:
    if isinstance(exc, ToolError):
        return exc.message
    if isinstance(exc, TimeoutError):
        return f"{tool_name} timed out"
    text = str(exc).strip()
    message = f"Error: {type(exc).__name__}" + (f": {text}" if text else "")
    return message if len(message) <= MAX_ERROR_CHARS else message[:MAX_ERROR_CHARS] + "…"


async def classify_error(state: CallState, exc: BaseException) -> None:
    """14. Any exception → an ``is_error`` tool_result + a telemetry-safe class (no message)."""
    state.error_class = error_class(exc)
    state.content = _model_message(exc, state.tool_name)
    state.is_error = True
    if state.phase in _EXECUTION_PHASES and state.ctx.hooks is not None and state.tool:
        interrupted = isinstance(exc, ToolCancelled)
        try:
            out = await asyncio.wait_for(
                state.ctx.hooks.post_tool_use_failure(
                    tool_name=state.tool.name,
                    tool_input=state.hook_input(),
                    tool_use_id=state.call.id,
                    error=state.content,
                    permission_mode=state.ctx.permissions.mode.value,
                    is_interrupt=interrupted,
                ),
                # After Ctrl+C the user is waiting: a slow hook must not hold the turn.
                INTERRUPT_HOOK_SECONDS if interrupted else None,
            )
            _absorb(state, out, "PostToolUseFailure")
        except Exception:
            pass  # the hook runner reports its own failures; the call's error stands
    tool = state.tool
    attributes = {
        # MCP names carry user server names; an unknown name is model text: neither is sent.
        "tool_name": "unknown" if tool is None else ("mcp_tool" if tool.is_mcp else tool.name),
        "error_class": state.error_class,
        "phase": state.phase,
        "duration_ms": round((time.perf_counter() - state.started) * 1000, 3),
    }
    event = TelemetryEvent.make("nerve.tool_error", attributes)
    try:
        state.ctx.callbacks.on_event(event)
    except Exception:
        pass
    emit(event.name, event.attributes)
