"""What the loop hands the tools for one model call, and small helpers of the turn.

``context_for_turn`` lays the UI callbacks of one request (permission prompts, progress,
notices) over the loop's live context; the helpers turn outcomes and usage into event data.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from agent_cli.loop.events import Notice, PermissionAsked, PermissionDecided, ToolProgress
from agent_cli.model.usage import Usage
from permissions.types import RuleValue
from tools.base import Tool
from tools.context import PermissionPrompt, PermissionResponse, ToolUseContext
from tools.pipeline.types import CallOutcome, find_tool

__all__ = [
    "Emit",
    "PermissionHandlerFn",
    "RulesSink",
    "TurnHost",
    "apply_modifiers",
    "context_for_turn",
    "progress_text",
    "result_summary",
    "usage_dict",
]

Emit = Callable[[Any], None]
PermissionHandlerFn = Callable[[PermissionPrompt], Awaitable[PermissionResponse]]
RulesSink = Callable[[tuple[RuleValue, ...]], list[str]]


class TurnHost(Protocol):
    """The loop as the turn's callbacks see it: read when a callback runs, not when it is made
    (a mode change or a new MCP tool mid-batch is what the next prompt or progress sees)."""

    ctx: ToolUseContext
    permission_handler: PermissionHandlerFn | None
    on_rules_to_persist: RulesSink | None

    @property
    def tools(self) -> Sequence[Tool[Any]]: ...


def context_for_turn(host: TurnHost, emit: Emit) -> ToolUseContext:
    """The host's context with callbacks that report to ``emit`` (one per model call)."""
    handler = host.permission_handler

    async def request_permission(prompt: PermissionPrompt) -> PermissionResponse:
        emit(PermissionAsked(prompt.tool_use_id, prompt.tool_name, prompt.verdict.reason))
        if handler is None:
            response = await host.ctx.callbacks.request_permission(prompt)
        else:
            response = await handler(prompt)
        emit(
            PermissionDecided(
                prompt.tool_use_id,
                prompt.tool_name,
                "allow" if response.allowed else "deny",
                response.feedback or prompt.verdict.reason,
                "user",
            )
        )
        if response.rules and host.on_rules_to_persist is not None:
            for note in host.on_rules_to_persist(response.rules):
                emit(Notice(note))
        return response

    def on_progress(tool_use_id: str, progress: Any) -> None:
        text = ""
        tool_name = None
        render = None
        # A tool's progress names its tool (a dict's "tool" key, or a ``tool`` field), so its
        # own renderer shows it (Bash: last lines and count; Grep and Glob: counts).
        if isinstance(progress, dict):
            tool_name = progress.get("tool")
        else:
            tool_name = getattr(progress, "tool", None)
        if tool_name:
            tool = find_tool(host.tools, tool_name)
            render = tool.render_progress if tool is not None else None
        try:
            text = render(progress) if render is not None else progress_text(progress)
        except Exception:
            text = ""
        emit(ToolProgress(tool_use_id, progress, text))

    callbacks = replace(
        host.ctx.callbacks,
        request_permission=request_permission,
        on_progress=on_progress,
        # What tools and hooks tell the user (hook messages and failures, a classifier that
        # gave up) is a warning: print mode shows warnings on stderr in every output format.
        notify=lambda text: emit(Notice(text, "warning")),
    )
    return replace(host.ctx, callbacks=callbacks)


def apply_modifiers(ctx: ToolUseContext, outcomes: Sequence[CallOutcome]) -> ToolUseContext:
    """What the tools changed, applied in call order to the live context.

    Not the executor's final context: the user may have changed the mode or added a rule while
    the batch ran (Shift+Tab, "don't ask again"), and that must survive the batch. Modifiers
    are pure functions of a context, so replaying them here gives the tools' changes on top.
    """
    for outcome in outcomes:
        if outcome.context_modifier is not None:
            ctx = outcome.context_modifier(ctx)
    return ctx


def usage_dict(u: Usage) -> dict[str, int]:
    """Usage in the API's field names (transcript records, ``TurnFinished``)."""
    return {
        "input_tokens": u.input,
        "output_tokens": u.output,
        "cache_creation_input_tokens": u.cache_creation,
        "cache_read_input_tokens": u.cache_read,
    }


def progress_text(progress: Any) -> str:
    """A progress event's text when its tool has no renderer of its own."""
    if isinstance(progress, str):
        return progress
    for attr in ("text", "last_lines", "message"):
        value = getattr(progress, attr, None)
        if isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)):
            return "\n".join(map(str, value))
    return ""


def result_summary(outcome: CallOutcome) -> str:
    """One line for a finished call: the result's first line, or its number of blocks."""
    content = outcome.tool_result.get("content")
    if isinstance(content, str):
        first = content.strip().splitlines()[:1]
        return first[0][:200] if first else ""
    return f"{len(content or [])} content blocks"
