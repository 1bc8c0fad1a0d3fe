"""EnterPlanMode / ExitPlanMode through the real pipeline, engine and executor."""

from __future__ import annotations

from pathlib import Path

from permissions.types import PermissionMode
from tests.tools.pipeline_helpers import ScriptedPrompts, make_ctx
from tools.builtin.plan_mode import ENTER_PLAN_MODE, EXIT_PLAN_MODE
from tools.builtin.write import write_tool as WRITE
from tools.context import (
    ConversationState,
    PermissionAnswer,
    PermissionResponse,
    ToolUseContext,
)
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call

PLAN = "## Plan\n1. Add `hello.txt`\n2. Run the tests"
TOOLS = (ENTER_PLAN_MODE, EXIT_PLAN_MODE, WRITE)


async def _run(
    name: str, inp: dict[str, object], ctx: ToolUseContext, call_id: str = "t1"
) -> CallOutcome:
    return await run_tool_call(ToolCall(call_id, name, inp), ctx)


async def test_enter_plan_mode_runs_without_a_prompt_and_its_modifier_switches_to_plan(
    tmp_path: Path,
) -> None:
    prompts = ScriptedPrompts()  # no answers: any prompt fails the test
    ctx = make_ctx(TOOLS, mode=PermissionMode.ACCEPT_EDITS, cwd=tmp_path, prompts=prompts)
    out = await _run("EnterPlanMode", {}, ctx)
    assert not out.is_error, out.tool_result
    assert "Entered plan mode" in out.tool_result["content"]
    assert out.context_modifier is not None
    assert ctx.permissions.mode is PermissionMode.ACCEPT_EDITS  # the call itself changed nothing
    planned = out.context_modifier(ctx)
    assert planned.permissions.mode is PermissionMode.PLAN
    assert planned.permissions.mode_before_plan is PermissionMode.ACCEPT_EDITS
    assert prompts.prompts == []


async def test_in_plan_mode_write_is_refused_then_approved_plan_restores_the_mode(
    tmp_path: Path,
) -> None:
    target = tmp_path / "hello.txt"
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    ctx = make_ctx(TOOLS, mode=PermissionMode.ACCEPT_EDITS, cwd=tmp_path, prompts=prompts)
    # The executor applies each serial call's modifier before the next call starts.
    executor = StreamingToolExecutor(ctx)
    executor.add(ToolCall("e", "EnterPlanMode", {}))
    executor.add(ToolCall("w1", "Write", {"file_path": str(target), "content": "hi\n"}))
    executor.add(ToolCall("x", "ExitPlanMode", {"plan": PLAN}))
    executor.add(ToolCall("w2", "Write", {"file_path": str(target), "content": "hi\n"}))
    enter, write1, exit_, write2 = await executor.finish()

    assert not enter.is_error
    assert write1.is_error and "plan mode" in write1.tool_result["content"]
    assert not exit_.is_error, exit_.tool_result
    assert "User has approved your plan" in exit_.tool_result["content"]
    assert PLAN in exit_.tool_result["content"]
    # The user saw exactly one prompt: the plan, as the preview.
    assert len(prompts.prompts) == 1
    shown = prompts.prompts[0]
    assert shown.tool_name == "ExitPlanMode" and shown.preview is not None
    assert PLAN in shown.preview
    assert shown.verdict.reason == "Exit plan mode?"
    # Back in acceptEdits (the mode before plan): the second Write runs without a prompt.
    assert not write2.is_error, write2.tool_result
    assert target.read_text() == "hi\n"
    assert executor.current_context.permissions.mode is PermissionMode.ACCEPT_EDITS
    assert executor.current_context.permissions.mode_before_plan is None


async def test_declined_plan_stays_in_plan_mode_and_the_feedback_reaches_the_model(
    tmp_path: Path,
) -> None:
    feedback = "Also update the README first"
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY, feedback=feedback)])
    ctx = make_ctx(TOOLS, mode=PermissionMode.PLAN, cwd=tmp_path, prompts=prompts)
    out = await _run("ExitPlanMode", {"plan": PLAN}, ctx)
    assert out.is_error
    assert feedback in out.tool_result["content"]
    assert out.context_modifier is None
    assert out.user_decided
    assert len(prompts.prompts) == 1


async def test_exit_plan_mode_without_a_ui_is_denied_and_stays_in_plan(tmp_path: Path) -> None:
    ctx = make_ctx(TOOLS, mode=PermissionMode.PLAN, cwd=tmp_path)  # headless: asks are denied
    out = await _run("ExitPlanMode", {"plan": PLAN}, ctx)
    assert out.is_error and out.context_modifier is None
    assert "no one is here to grant it" in out.tool_result["content"]


async def test_exit_plan_mode_outside_plan_mode_is_a_validation_error(tmp_path: Path) -> None:
    ctx = make_ctx(TOOLS, mode=PermissionMode.DEFAULT, cwd=tmp_path, prompts=ScriptedPrompts())
    out = await _run("ExitPlanMode", {"plan": PLAN}, ctx)
    assert out.is_error and "not in plan mode" in out.tool_result["content"]


async def test_exit_plan_mode_needs_a_plan_and_accepts_allowed_prompts(tmp_path: Path) -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    ctx = make_ctx(TOOLS, mode=PermissionMode.PLAN, cwd=tmp_path, prompts=prompts)
    missing = await _run("ExitPlanMode", {"allowedPrompts": [{"tool": "Bash", "prompt": "x"}]}, ctx)
    assert missing.is_error and "non-empty `plan`" in missing.tool_result["content"]
    out = await _run(
        "ExitPlanMode",
        {"plan": PLAN, "allowedPrompts": [{"tool": "Bash", "prompt": "run the tests"}]},
        ctx,
    )
    assert not out.is_error
    preview = prompts.prompts[0].preview or ""
    assert "Bash: run the tests" in preview


async def test_exit_restores_default_when_plan_was_entered_by_the_user(tmp_path: Path) -> None:
    # Shift+Tab into plan mode leaves no record of the mode before: back to default.
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    ctx = make_ctx(TOOLS, mode=PermissionMode.PLAN, cwd=tmp_path, prompts=prompts)
    out = await _run("ExitPlanMode", {"plan": PLAN}, ctx)
    assert out.context_modifier is not None
    assert out.context_modifier(ctx).permissions.mode is PermissionMode.DEFAULT


async def test_bypass_is_not_restored_unless_available(tmp_path: Path) -> None:
    from dataclasses import replace

    from tools.builtin.plan_mode import exit_plan_modifier

    ctx = make_ctx(TOOLS, mode=PermissionMode.PLAN, cwd=tmp_path)
    ctx = replace(ctx, permissions=replace(ctx.permissions, mode_before_plan=PermissionMode.BYPASS))
    assert exit_plan_modifier(ctx).permissions.mode is PermissionMode.DEFAULT
    enabled = replace(ctx, permissions=replace(ctx.permissions, bypass_available=True))
    assert exit_plan_modifier(enabled).permissions.mode is PermissionMode.BYPASS


async def test_plan_modifiers_are_pure(tmp_path: Path) -> None:
    from tools.builtin.plan_mode import enter_plan_modifier, exit_plan_modifier

    ctx = make_ctx(TOOLS, mode=PermissionMode.ACCEPT_EDITS, cwd=tmp_path)
    planned = enter_plan_modifier(ctx)
    # applying the same modifiers again (the loop replays them on the live context) is safe
    assert exit_plan_modifier(planned).permissions.mode is PermissionMode.ACCEPT_EDITS
    assert exit_plan_modifier(planned).permissions.mode is PermissionMode.ACCEPT_EDITS
    assert (
        ctx.permissions.mode is PermissionMode.ACCEPT_EDITS
        and ctx.state.conversation == ConversationState()
    )


async def test_a_deny_rule_on_exit_plan_mode_wins_over_the_prompt(tmp_path: Path) -> None:
    from tests.tools.pipeline_helpers import rules

    ctx = make_ctx(
        TOOLS,
        mode=PermissionMode.PLAN,
        cwd=tmp_path,
        prompts=ScriptedPrompts(),
        rule_set=rules(("ExitPlanMode", "deny")),
    )
    out = await _run("ExitPlanMode", {"plan": PLAN}, ctx)
    assert out.is_error and "deny rule" in out.tool_result["content"]


async def test_plan_tools_refuse_sub_agents(tmp_path: Path) -> None:
    import dataclasses

    from tools.context import AgentContext

    ctx = make_ctx(TOOLS, mode=PermissionMode.PLAN, cwd=tmp_path, prompts=ScriptedPrompts())
    child = dataclasses.replace(ctx, agent=AgentContext(agent_id="a1"))
    calls: list[tuple[str, dict[str, object]]] = [
        ("EnterPlanMode", {}),
        ("ExitPlanMode", {"plan": PLAN}),
    ]
    for name, inp in calls:
        out = await _run(name, inp, child)
        assert out.is_error and "sub-agent" in out.tool_result["content"]
