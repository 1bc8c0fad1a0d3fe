"""The Agent tool through the real pipeline, with a scripted SubagentRunner (the port).

The runner here is a test double for the port only; the real runner (child AgentLoop, sidechain
transcript, bubbled prompts) is tested in ``tests/agent_cli/agents/test_runner.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from permissions.types import PermissionMode
from tests.tools.pipeline_helpers import ScriptedPrompts, make_ctx, rules, wait_for
from tools.base import ProgressFn
from tools.builtin.agent import (
    AGENT,
    AgentDefinition,
    AgentOutput,
    AgentProgress,
    SubagentResult,
    SubagentRunner,
    render_agent_progress,
)
from tools.context import PermissionAnswer, PermissionResponse, ToolServices, ToolUseContext
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call

TYPES = (
    AgentDefinition("general-purpose", "does anything"),
    AgentDefinition("Explore", "reads", tools=("Read",)),
)


@dataclass
class ScriptedRunner:
    """Answers each run with ``reply``; records calls; can block until released."""

    reply: str = "found it in src/x.py:3"
    is_error: bool = False
    gate: asyncio.Event | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)
    running: int = 0
    max_running: int = 0

    def agent_types(self) -> Sequence[AgentDefinition]:
        return TYPES

    async def run(
        self,
        prompt: str,
        *,
        description: str,
        subagent_type: str | None,
        model: str | None,
        ctx: ToolUseContext,
        progress: ProgressFn,
    ) -> SubagentResult:
        self.calls.append(
            {"prompt": prompt, "description": description, "type": subagent_type, "model": model}
        )
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            progress(AgentProgress("a1", description, "Read(src/x.py)", ("Read(src/x.py)",), 1))
            self.started.set()
            if self.gate is not None:
                await self.gate.wait()
            else:
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        finally:
            self.running -= 1
        return SubagentResult(
            text=self.reply,
            agent_id="a1",
            usage={"input_tokens": 100, "output_tokens": 20},
            tool_uses=2,
            duration_ms=1500,
            is_error=self.is_error,
            error="model overloaded" if self.is_error else None,
        )


def _ctx(runner: Any, tmp_path: Path, **kw: Any) -> ToolUseContext:
    return make_ctx([AGENT], cwd=tmp_path, services=ToolServices(subagent_runner=runner), **kw)


def _call(call_id: str = "ag1", **inp: Any) -> ToolCall:
    inp.setdefault("description", "find the parser")
    inp.setdefault("prompt", "Find where the parser lives and report the file.")
    return ToolCall(call_id, "Agent", inp)


def test_scripted_runner_satisfies_the_port() -> None:
    assert isinstance(ScriptedRunner(), SubagentRunner)


async def test_agent_runs_without_a_prompt_and_returns_the_final_text(tmp_path: Path) -> None:
    runner = ScriptedRunner()
    progress: list[tuple[str, Any]] = []
    ctx = _ctx(runner, tmp_path, prompts=ScriptedPrompts(), progress=progress)
    out = await run_tool_call(_call(), ctx)
    assert not out.is_error, out.tool_result
    content = out.tool_result["content"]
    assert content.startswith("found it in src/x.py:3")
    assert "2 tool uses" in content and "120 tokens" in content
    assert out.new_messages == ()  # the child's conversation stays in its sidechain
    assert isinstance(out.output, AgentOutput) and out.output.subagent_type == "general-purpose"
    assert out.verdict is not None and "sub-agent" in out.verdict.reason
    assert runner.calls == [
        {
            "prompt": "Find where the parser lives and report the file.",
            "description": "find the parser",
            "type": "general-purpose",
            "model": None,
        }
    ]
    assert [tid for tid, _ in progress] == ["ag1"]
    assert "Read(src/x.py)" in render_agent_progress(progress[0][1])


async def test_legacy_task_name_and_custom_type_and_model(tmp_path: Path) -> None:
    runner = ScriptedRunner()
    ctx = _ctx(runner, tmp_path, prompts=ScriptedPrompts())
    call = ToolCall(
        "t",
        "Task",
        {"description": "x", "prompt": "y", "subagent_type": "Explore", "model": "haiku"},
    )
    out = await run_tool_call(call, ctx)
    assert not out.is_error, out.tool_result
    assert runner.calls[0]["type"] == "Explore" and runner.calls[0]["model"] == "haiku"


async def test_deny_rule_on_a_subagent_type_wins_over_the_tools_allow(tmp_path: Path) -> None:
    runner = ScriptedRunner()
    ctx = _ctx(
        runner, tmp_path, prompts=ScriptedPrompts(), rule_set=rules(("Agent(Explore)", "deny"))
    )
    denied = await run_tool_call(_call(subagent_type="Explore"), ctx)
    assert denied.is_error and "Agent(Explore)" in denied.tool_result["content"]
    allowed = await run_tool_call(_call(subagent_type="general-purpose"), ctx)
    assert not allowed.is_error
    assert [c["type"] for c in runner.calls] == ["general-purpose"]


async def test_ask_rule_on_the_default_type_prompts_the_user(tmp_path: Path) -> None:
    runner = ScriptedRunner()
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY, feedback="not now")])
    ctx = _ctx(runner, tmp_path, prompts=prompts, rule_set=rules(("Agent(general-purpose)", "ask")))
    out = await run_tool_call(_call(), ctx)  # no subagent_type: backfilled to general-purpose
    assert out.is_error and "not now" in out.tool_result["content"]
    assert len(prompts.prompts) == 1 and prompts.prompts[0].tool_name == "Agent"
    assert runner.calls == []


async def test_plan_mode_still_allows_a_subagent(tmp_path: Path) -> None:
    runner = ScriptedRunner()
    ctx = _ctx(runner, tmp_path, prompts=ScriptedPrompts(), mode=PermissionMode.PLAN)
    out = await run_tool_call(_call(subagent_type="Explore"), ctx)
    assert not out.is_error, out.tool_result


async def test_unknown_type_and_missing_runner_are_validation_errors(tmp_path: Path) -> None:
    runner = ScriptedRunner()
    out = await run_tool_call(_call(subagent_type="nope"), _ctx(runner, tmp_path))
    assert out.is_error
    assert "'nope' not found" in out.tool_result["content"]
    assert "general-purpose, Explore" in out.tool_result["content"]
    missing = await run_tool_call(_call(), _ctx(None, tmp_path))
    assert missing.is_error and "not available" in missing.tool_result["content"]
    bad = await run_tool_call(ToolCall("b", "Agent", {"description": "x"}), _ctx(runner, tmp_path))
    assert bad.is_error and "prompt" in bad.tool_result["content"]
    assert runner.calls == []


async def test_a_failed_subagent_is_an_error_result(tmp_path: Path) -> None:
    runner = ScriptedRunner(reply="partial notes", is_error=True)
    out = await run_tool_call(_call(), _ctx(runner, tmp_path))
    assert out.is_error
    assert "model overloaded" in out.tool_result["content"]
    assert "partial notes" in out.tool_result["content"]


async def test_parent_abort_cancels_the_running_subagent(tmp_path: Path) -> None:
    runner = ScriptedRunner(gate=asyncio.Event())
    ctx = _ctx(runner, tmp_path)
    task = asyncio.ensure_future(run_tool_call(_call(), ctx))
    await wait_for(runner.started, "the sub-agent to start")
    ctx.abort.abort()
    out: CallOutcome = await asyncio.wait_for(task, 5)
    assert out.cancelled and out.is_error
    assert runner.cancelled


async def test_several_agent_calls_run_one_after_another(tmp_path: Path) -> None:
    runner = ScriptedRunner()
    executor = StreamingToolExecutor(_ctx(runner, tmp_path))
    for i in range(3):
        executor.add(_call(f"a{i}", description=f"task {i}"))
    outcomes = await executor.finish()
    assert [o.is_error for o in outcomes] == [False, False, False]
    assert runner.max_running == 1
    assert [c["description"] for c in runner.calls] == ["task 0", "task 1", "task 2"]


async def test_a_subagent_cannot_start_a_subagent(tmp_path: Path) -> None:
    import dataclasses

    from tools.context import AgentContext

    runner = ScriptedRunner()
    ctx = dataclasses.replace(_ctx(runner, tmp_path), agent=AgentContext(agent_id="child"))
    out = await run_tool_call(_call(), ctx)
    assert out.is_error and "cannot start another sub-agent" in out.tool_result["content"]
    assert runner.calls == []
