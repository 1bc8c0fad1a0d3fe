"""TodoWrite through the real pipeline, engine and registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from permissions.types import PermissionContext, PermissionMode
from tests.tools.pipeline_helpers import ScriptedPrompts, make_ctx, rules
from tools.builtin.todo import (
    RESULT_MESSAGE,
    TODO_WRITE_TOOL,
    TodoWriteOutput,
    current_todos,
    restore_todos,
    todos_from_messages,
)
from tools.context import (
    ConversationState,
    PermissionAnswer,
    PermissionResponse,
    ToolUseContext,
    create_subagent_context,
)
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call
from tools.registry import assemble_tool_pool, get_all_base_tools

TODOS = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


async def _write(ctx: ToolUseContext, todos: list[Any], call_id: str = "t1") -> CallOutcome:
    return await run_tool_call(ToolCall(call_id, "TodoWrite", {"todos": todos}), ctx)


def _ctx(tmp_path: Path, **kw: Any) -> tuple[ToolUseContext, ScriptedPrompts]:
    prompts = ScriptedPrompts()  # no answers: any prompt fails the test
    return make_ctx((TODO_WRITE_TOOL,), cwd=tmp_path, prompts=prompts, **kw), prompts


async def test_valid_update_is_stored_and_returned_without_a_prompt(tmp_path: Path) -> None:
    ctx, prompts = _ctx(tmp_path)
    out = await _write(ctx, TODOS)
    assert not out.is_error, out.tool_result
    assert out.tool_result["content"] == RESULT_MESSAGE
    assert ctx.state.conversation.todos == TODOS
    assert isinstance(out.output, TodoWriteOutput)
    assert out.output.old_todos == [] and out.output.new_todos == TODOS
    assert out.verdict is not None and out.verdict.reason == "updating the todo list"
    assert prompts.prompts == []

    # A second call replaces the list with a NEW object and reports the old one.
    first = ctx.state.conversation.todos
    later = [dict(t, status="completed") for t in TODOS[:2]] + [dict(TODOS[2], status="pending")]
    out2 = await _write(ctx, later, "t2")
    assert not out2.is_error
    assert out2.output.old_todos == TODOS and out2.output.new_todos == later
    assert ctx.state.conversation.todos == later and ctx.state.conversation.todos is not first
    assert first == TODOS  # the earlier list was not mutated


async def test_two_in_progress_items_are_refused_and_the_list_is_kept(tmp_path: Path) -> None:
    ctx, prompts = _ctx(tmp_path)
    await _write(ctx, TODOS)
    two = [dict(t, status="in_progress") for t in TODOS[:2]]
    out = await _write(ctx, two, "t2")
    assert out.is_error
    assert "exactly one may be in_progress" in out.tool_result["content"]
    assert ctx.state.conversation.todos == TODOS
    assert prompts.prompts == []


async def test_blank_content_and_a_bad_status_are_refused(tmp_path: Path) -> None:
    ctx, _ = _ctx(tmp_path)
    blank = await _write(ctx, [{"content": "  ", "status": "pending", "activeForm": "x"}])
    assert blank.is_error and "Todo item 1 has empty content" in blank.tool_result["content"]
    bad = await _write(ctx, [{"content": "a", "status": "doing", "activeForm": "a"}], "t2")
    assert bad.is_error and "status" in bad.tool_result["content"]
    not_a_list = await run_tool_call(ToolCall("t3", "TodoWrite", {"todos": "buy milk"}), ctx)
    assert not_a_list.is_error
    assert ctx.state.conversation.todos is None


async def test_older_fields_are_accepted(tmp_path: Path) -> None:
    ctx, _ = _ctx(tmp_path)
    old_style = [{"id": "1", "content": "Ship it", "status": "pending", "priority": "high"}]
    out = await _write(ctx, old_style)
    assert not out.is_error, out.tool_result
    assert ctx.state.conversation.todos == old_style


async def test_all_completed_clears_the_stored_list_but_the_result_shows_it(
    tmp_path: Path,
) -> None:
    ctx, _ = _ctx(tmp_path)
    await _write(ctx, TODOS)
    done = [dict(t, status="completed") for t in TODOS]
    out = await _write(ctx, done, "t2")
    assert out.output.new_todos == done
    assert ctx.state.conversation.todos == []


async def test_deny_rule_removes_it_from_the_pool_and_ask_rule_still_asks(tmp_path: Path) -> None:
    names = [t.name for t in get_all_base_tools()]
    assert "TodoWrite" in names
    denied = PermissionContext(rules=rules(("TodoWrite", "deny")), cwd=tmp_path)
    assert "TodoWrite" not in [t.name for t in assemble_tool_pool(get_all_base_tools(), [], denied)]
    open_ctx = PermissionContext(cwd=tmp_path)
    assert "TodoWrite" in [t.name for t in assemble_tool_pool(get_all_base_tools(), [], open_ctx)]

    # An ask rule wins over the tool's own allow: the user is prompted.
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    ctx = make_ctx(
        (TODO_WRITE_TOOL,), cwd=tmp_path, prompts=prompts, rule_set=rules(("TodoWrite", "ask"))
    )
    out = await _write(ctx, TODOS)
    assert out.is_error and len(prompts.prompts) == 1
    assert ctx.state.conversation.todos is None


async def test_runs_without_prompt_in_plan_and_dont_ask_modes(tmp_path: Path) -> None:
    for mode in (PermissionMode.PLAN, PermissionMode.DONT_ASK):
        ctx, prompts = _ctx(tmp_path, mode=mode)
        out = await _write(ctx, TODOS)
        assert not out.is_error, (mode, out.tool_result)
        assert prompts.prompts == []


async def test_serial_calls_in_one_response_apply_in_order(tmp_path: Path) -> None:
    ctx, _ = _ctx(tmp_path)
    executor = StreamingToolExecutor(ctx)
    executor.add(ToolCall("a", "TodoWrite", {"todos": TODOS}))
    executor.add(ToolCall("b", "TodoWrite", {"todos": TODOS[1:2]}))
    first, second = await executor.finish()
    assert second.output.old_todos == TODOS
    assert ctx.state.conversation.todos == TODOS[1:2]
    assert not first.is_error


async def test_sub_agent_list_is_separate(tmp_path: Path) -> None:
    parent, _ = _ctx(tmp_path)
    await _write(parent, TODOS)
    child = create_subagent_context(parent, agent_id="agent-1", system_prompt="")
    assert current_todos(child) == []  # the parent's list is not the child's
    out = await _write(child, TODOS[2:], "c1")
    assert not out.is_error and out.output.old_todos == []
    assert current_todos(child) == TODOS[2:]
    assert parent.state.conversation.todos == TODOS  # the parent's list is untouched
    assert current_todos(parent) == TODOS


def _conversation(*calls: tuple[str, list[Any], bool]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "do it"}]
    for call_id, todos, is_error in calls:
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": "TodoWrite",
                        "input": {"todos": todos},
                    }
                ],
            }
        )
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": "x"}
        if is_error:
            result["is_error"] = True
        messages.append({"role": "user", "content": [result]})
    return messages


def test_restore_from_a_conversation_takes_the_last_successful_call() -> None:
    two = [dict(t, status="in_progress") for t in TODOS[:2]]
    messages = _conversation(("a", TODOS, False), ("b", two, True))
    assert todos_from_messages(messages) == TODOS
    assert todos_from_messages(_conversation()) is None
    assert todos_from_messages([{"role": "user", "content": None}, "junk"]) is None  # type: ignore[list-item]
    unanswered = _conversation(("a", TODOS, False))
    unanswered[-1]["content"] = []
    assert todos_from_messages(unanswered) is None

    state = ConversationState(todos=[{"content": "stale"}], todos_owner="x")
    restore_todos(state, messages)
    assert state == ConversationState(todos=TODOS, todos_owner=None)
    restore_todos(state, [])
    assert state.todos == []
