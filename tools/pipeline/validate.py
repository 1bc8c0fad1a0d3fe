"""Pipeline steps 1–6: find the tool, stop if aborted, parse, validate, start the classifier,
backfill (step 7, PreToolUse hooks, is in ``tools.pipeline.hooks``).

A step that must end the call raises a ``ToolError``; ``classify_error`` turns it into the
``is_error`` tool_result, so every failure takes the same road.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic

from permissions.types import PermissionMode
from tools.errors import InputError, ToolCancelled
from tools.pipeline.types import (
    INTERRUPTED_MESSAGE,
    CallState,
    find_tool,
)

__all__ = [
    "backfill_input",
    "check_abort",
    "format_validation_error",
    "parse_input",
    "resolve_tool",
    "start_classifier",
    "validate_input",
]

_MAX_ISSUES = 5


async def resolve_tool(state: CallState) -> None:
    """1. Find the tool by name, then by alias; an unknown name is an error for the model."""
    tool = find_tool(state.ctx.options.tools, state.call.name)
    if tool is None:
        raise InputError(f"No such tool available: {state.call.name}", code="unknown_tool")
    state.tool = tool


async def check_abort(state: CallState) -> None:
    """2. A call queued before the abort propagated does no work."""
    if state.ctx.abort.aborted:
        raise ToolCancelled(INTERRUPTED_MESSAGE)


def format_validation_error(tool_name: str, err: pydantic.ValidationError) -> str:
    """``InputValidationError: Read failed: file_path: Field required`` — never a pydantic dump."""
    issues = []
    for item in err.errors(include_url=False, include_input=False)[:_MAX_ISSUES]:
        loc = ".".join(str(p) for p in item.get("loc", ())) or "input"
        issues.append(f"{loc}: {item.get('msg', 'invalid')}")
    more = err.error_count() - len(issues)
    text = "; ".join(issues) + (f" (and {more} more)" if more > 0 else "")
    return f"InputValidationError: {tool_name} failed: {text}"


def _parse(state: CallState, raw: Any, *, what: str = "") -> Any:
    assert state.tool is not None
    tool = state.tool
    unparsed = getattr(raw, "parse_error", None)  # the model client's UnparsedToolInput
    if isinstance(raw, str) and unparsed:
        raise InputError(
            f"InputValidationError: {tool.name} failed: the tool input is not valid JSON "
            f"({unparsed}); the call was not run. Send the input again as a JSON object."
        )
    try:
        return tool.input_model.model_validate(raw)
    except pydantic.ValidationError as err:
        message = what + format_validation_error(tool.name, err)
        if tool.should_defer and tool.name not in state.ctx.options.loaded_deferred:
            message += (
                "\n\nThis tool's schema was not loaded; call ToolSearch with query "
                f'"select:{tool.name}" first, then retry'
            )
        raise InputError(message) from None


async def parse_input(state: CallState) -> None:
    """3. Schema validation with a concise message (and the ToolSearch hint when deferred)."""
    state.parsed = _parse(state, state.call.input)


async def _semantic_check(state: CallState, parsed: Any) -> None:
    assert state.tool is not None
    problem = await state.tool.validate_input(parsed, state.ctx)
    if problem is not None:
        raise InputError(problem.message, code=problem.code)


async def validate_input(state: CallState) -> None:
    """4. The tool's semantic checks beyond the schema."""
    await _semantic_check(state, state.parsed)


async def start_classifier(state: CallState) -> None:
    """5. In auto mode, start the configured safety classifier now; step 8 awaits it."""
    ctx = state.ctx
    if ctx.permissions.mode is not PermissionMode.AUTO:
        return
    classifier = ctx.options.services.classifier
    if classifier is None:
        return
    assert state.tool is not None
    state.classifier_task = asyncio.ensure_future(
        classifier.classify(state.tool.name, state.hook_input(), ctx)
    )


async def backfill_input(state: CallState) -> None:
    """6. A copy with derived fields (absolute paths) for hooks and permissions."""
    assert state.tool is not None
    state.set_input(state.parsed, state.tool.backfill_input(state.parsed, state.ctx))


async def replace_input(state: CallState, raw: Any, *, source: str) -> None:
    """Input rewritten by a hook or the user: parsed, validated and backfilled again."""
    assert state.tool is not None
    parsed = _parse(state, raw, what=f"{source} returned invalid input: ")
    await _semantic_check(state, parsed)
    state.set_input(parsed, state.tool.backfill_input(parsed, state.ctx))
    state.input_updated = True
