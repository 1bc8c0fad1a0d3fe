"""Pipeline steps 10, 11, 13, 14: execute, budget the result, attach messages, classify errors.

Step 12 (PostToolUse hooks) is in ``tools.pipeline.hooks``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tools.errors import ToolCancelled, ToolError, error_class
from tools.pipeline.budget import (
    content_size,
    empty_result_text,
    has_media,
    persist_result,
    preview_text,
    result_limit,
)
from tools.pipeline.file_watch import FileWatch, file_watch
from tools.pipeline.hooks import failure_hooks
from tools.pipeline.types import MAX_ERROR_CHARS, CallState, until_abort
from tools.telemetry import TelemetryEvent, emit

__all__ = [
    "attach_messages",
    "budget_result",
    "classify_error",
    "execute",
]

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
    if state.phase in _EXECUTION_PHASES:
        await failure_hooks(state, interrupted=isinstance(exc, ToolCancelled))
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
