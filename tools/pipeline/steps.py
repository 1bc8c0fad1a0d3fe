"""The fourteen steps every tool call travels (DESIGN.md, "The pipeline").

| #  | step               | module              |
|----|--------------------|---------------------|
| 1  | resolve_tool       | pipeline.validate   |
| 2  | check_abort        | pipeline.validate   |
| 3  | parse_input        | pipeline.validate   |
| 4  | validate_input     | pipeline.validate   |
| 5  | start_classifier   | pipeline.validate   |
| 6  | backfill_input     | pipeline.validate   |
| 7  | pre_tool_hooks     | pipeline.hooks      |
| 8  | resolve_permission | pipeline.permission |
| 9  | handle_denial      | pipeline.permission |
| 10 | execute            | pipeline.run        |
| 11 | budget_result      | pipeline.run        |
| 12 | post_tool_hooks    | pipeline.hooks      |
| 13 | attach_messages    | pipeline.run        |
| 14 | classify_error     | pipeline.run        |

Steps 1–13 run in order over one ``CallState``; a step that must end the call raises a
``ToolError`` and step 14 turns any exception into the call's ``is_error`` result. Only
``FatalError`` (and the task's own cancellation) unwinds past the pipeline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tools.context import ToolUseContext
from tools.errors import FatalError
from tools.pipeline.hooks import post_tool_hooks, pre_tool_hooks
from tools.pipeline.permission import handle_denial, resolve_permission
from tools.pipeline.run import (
    attach_messages,
    budget_result,
    classify_error,
    execute,
)
from tools.pipeline.types import CallOutcome, CallState, SafetyClassifier, ToolCall
from tools.pipeline.validate import (
    backfill_input,
    check_abort,
    parse_input,
    resolve_tool,
    start_classifier,
    validate_input,
)

__all__ = [
    "STEPS",
    "CallOutcome",
    "CallState",
    "SafetyClassifier",
    "ToolCall",
    "attach_messages",
    "backfill_input",
    "budget_result",
    "check_abort",
    "classify_error",
    "execute",
    "handle_denial",
    "parse_input",
    "post_tool_hooks",
    "pre_tool_hooks",
    "resolve_permission",
    "resolve_tool",
    "run_tool_call",
    "start_classifier",
    "validate_input",
]

Step = Callable[[CallState], Awaitable[None]]

STEPS: tuple[Step, ...] = (
    resolve_tool,
    check_abort,
    parse_input,
    validate_input,
    start_classifier,
    backfill_input,
    pre_tool_hooks,
    resolve_permission,
    handle_denial,
    execute,
    budget_result,
    post_tool_hooks,
    attach_messages,
)


async def run_tool_call(call: ToolCall, ctx: ToolUseContext) -> CallOutcome:
    """Run one call through the pipeline; always returns exactly one outcome."""
    state = CallState(call, ctx)
    try:
        for step in STEPS:
            state.phase = step.__name__
            await step(state)
    except FatalError:
        raise
    except Exception as exc:
        await classify_error(state, exc)
    finally:
        task = state.classifier_task
        if task is not None and not task.done():
            task.cancel()
        elif task is not None and not task.cancelled():
            task.exception()  # consumed: a failed classifier is not an unhandled error
    return state.outcome()
