"""TodoWrite: the model's own checklist for a multi-step task, shown to the user as it changes.

Each call replaces the whole list. The list lives in ``ctx.state.conversation.todos`` (one per
conversation); every call stores a NEW list object, never mutating the old one, because a
sub-agent's conversation state is a shallow copy of its parent's: mutating in place would leak
the child's list into the parent. ``todos_owner`` names the agent that wrote the list, so a
sub-agent starts with an empty list of its own instead of its parent's.

As in Claude Code, a list whose items are all completed is stored as empty (the work is done),
while the result's data still carries the list as written so the UI can show it checked off.

The tool changes nothing outside the conversation, so its own permission check allows it: it
never prompts. Deny and ask rules still win (the engine applies them before the tool's verdict),
and a bare ``TodoWrite`` deny rule removes it from the pool altogether.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from permissions.types import Decision, ReasonKind, Verdict
from tools.base import build_tool
from tools.context import ConversationState, ToolUseContext
from tools.result import ToolResult, ValidationError

__all__ = [
    "RESULT_MESSAGE",
    "TODO_WRITE_TOOL",
    "TOOLS",
    "TodoItem",
    "TodoWriteInput",
    "TodoWriteOutput",
    "current_todos",
    "restore_todos",
    "todos_from_messages",
]

RESULT_MESSAGE = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)

TodoStatus = Literal["pending", "in_progress", "completed"]

_DESCRIPTION = """\
Create and maintain a structured task list for the current session. It helps you track \
progress, organise complex work and show the user how the task is going.

Each call replaces the whole list: send every item, with its current status.

## When to use it
- A task with three or more distinct steps, or one that needs careful planning.
- The user gives several tasks at once (a numbered or comma-separated list).
- The user asks for a todo list.
- New instructions arrive: capture them as items.
- When you start an item, mark it in_progress BEFORE beginning the work; when it is done, mark \
it completed at once, and add any follow-up items you discovered.

## When NOT to use it
- A single, straightforward task, or one that takes fewer than three trivial steps.
- A purely conversational or informational request.
In those cases just do the task.

## Item states
- pending: not started yet
- in_progress: being worked on now; exactly one item at a time
- completed: finished successfully

Each item has `content` (imperative, e.g. "Run the tests") and `activeForm` (present \
continuous, shown while it is in progress, e.g. "Running the tests").

Only mark an item completed when it is fully done: not while tests fail, the implementation is \
partial, errors are unresolved or files are missing. If you are blocked, keep it in_progress \
and add an item for what must be resolved. Remove items that are no longer relevant.
"""


def _item_schema(schema: dict[str, Any]) -> None:
    # The schema sent to the API is Claude Code's current one: activeForm required, no legacy
    # fields. Parsing stays lenient so older transcripts (no activeForm, with id/priority) load.
    props = schema.get("properties", {})
    for legacy in ("id", "priority"):
        props.pop(legacy, None)
    if "activeForm" in props:
        props["activeForm"] = {
            "type": "string",
            "minLength": 1,
            "description": props["activeForm"].get("description", ""),
        }
    if "content" in props:
        props["content"]["minLength"] = 1
    schema["required"] = ["content", "status", "activeForm"]
    schema.pop("description", None)


class TodoItem(BaseModel):
    """One item: ``{content, status, activeForm}``; older versions also sent ``id``/``priority``."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, json_schema_extra=_item_schema)

    content: str = Field(description='What needs doing, imperative form, e.g. "Run the tests"')
    status: TodoStatus = Field(description="pending, in_progress or completed")
    active_form: str | None = Field(
        None,
        alias="activeForm",
        description='Present continuous form shown while in progress, e.g. "Running the tests"',
    )
    id: str | None = Field(None, description="Optional identifier (older versions)")
    priority: Literal["high", "medium", "low"] | None = Field(
        None, description="Optional priority (older versions)"
    )

    def stored(self) -> dict[str, Any]:
        """The item as kept in the session and shown by the UI (camelCase, no empty fields)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class TodoWriteInput(BaseModel):
    """Input of TodoWrite: the complete, updated list."""

    model_config = ConfigDict(extra="ignore")

    todos: list[TodoItem] = Field(description="The updated todo list")


class TodoWriteOutput(BaseModel):
    """The list before and after the call, for the UI and the transcript."""

    old_todos: list[dict[str, Any]]
    new_todos: list[dict[str, Any]]


def current_todos(ctx: ToolUseContext) -> list[dict[str, Any]]:
    """The todo list of the agent running under ``ctx`` (a copy; empty when it has none)."""
    state = ctx.state.conversation
    if state.todos_owner != ctx.agent.agent_id:
        return []  # the parent's list, seen through a sub-agent's shallow copy of the state
    return [dict(t) for t in state.todos or ()]


def _stored_list(items: list[TodoItem]) -> list[dict[str, Any]]:
    done = bool(items) and all(t.status == "completed" for t in items)
    return [] if done else [t.stored() for t in items]  # a new list, every time


def _store(state: ConversationState, agent_id: str | None, items: list[TodoItem]) -> None:
    state.todos = _stored_list(items)
    state.todos_owner = agent_id


async def _validate(inp: TodoWriteInput, _ctx: ToolUseContext) -> ValidationError | None:
    blank = [i + 1 for i, t in enumerate(inp.todos) if not t.content.strip()]
    if blank:
        items = ", ".join(str(n) for n in blank)
        return ValidationError(f"Todo item {items} has empty content.", "empty_content")
    running = [t.content for t in inp.todos if t.status == "in_progress"]
    if len(running) > 1:
        return ValidationError(
            f"{len(running)} todos are in_progress; exactly one may be in_progress at a time. "
            "Mark the others pending or completed.",
            "several_in_progress",
        )
    return None


async def _allow(_inp: TodoWriteInput, _ctx: ToolUseContext) -> Verdict:
    # Updating the list changes nothing outside the conversation: never worth a prompt.
    return Verdict(Decision.ALLOW, "updating the todo list", ReasonKind.TOOL)


async def _call(inp: TodoWriteInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    old = current_todos(ctx)
    _store(ctx.state.conversation, ctx.agent.agent_id, inp.todos)
    return ToolResult(TodoWriteOutput(old_todos=old, new_todos=[t.stored() for t in inp.todos]))


def _to_content(_data: Any) -> str:
    return RESULT_MESSAGE


def _render_result(data: Any) -> str:
    todos = data.new_todos if isinstance(data, TodoWriteOutput) else []
    done = sum(1 for t in todos if t.get("status") == "completed")
    return f"{done}/{len(todos)} todos completed"


def todos_from_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """The list as the last successful TodoWrite call in a conversation left it.

    ``None`` when the conversation has no such call (a call without a result, with an error
    result, or with input that no longer parses does not count).
    """
    calls: list[tuple[str, Any]] = []
    failed: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == TODO_WRITE_TOOL.name:
                calls.append((str(block.get("id")), block.get("input")))
            elif block.get("type") == "tool_result":
                answered.add(str(block.get("tool_use_id")))
                if block.get("is_error"):
                    failed.add(str(block.get("tool_use_id")))
    for call_id, raw in reversed(calls):
        if call_id not in answered or call_id in failed:
            continue
        try:
            inp = TodoWriteInput.model_validate(raw)
        except PydanticValidationError:
            continue
        return _stored_list(inp.todos)
    return None


def restore_todos(state: ConversationState, messages: Iterable[Mapping[str, Any]]) -> None:
    """Set the main agent's list from a resumed conversation (cleared when it has none)."""
    todos = todos_from_messages(messages)
    state.todos = todos if todos is not None else []
    state.todos_owner = None


TODO_WRITE_TOOL = build_tool(
    name="TodoWrite",
    input_model=TodoWriteInput,
    call=_call,
    description=_DESCRIPTION,
    search_hint="todo list task checklist progress plan steps",
    is_read_only=False,  # it changes session state (harmless, so its own check allows it)
    is_concurrency_safe=False,  # two parallel updates of one list: the later must win, in order
    validate_input=_validate,
    check_permissions=_allow,
    to_content=_to_content,
    render_call=lambda inp: f"{len(inp.todos)} item{'s' if len(inp.todos) != 1 else ''}",
    render_result=_render_result,
    max_result_size_chars=10_000,
)

TOOLS = (TODO_WRITE_TOOL,)
