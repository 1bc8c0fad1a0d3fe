"""The tool contract's fail-closed defaults and the sub-agent context's share/isolate choices."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from pydantic import BaseModel

from permissions.types import PermissionContext, PermissionMode, ToolKind
from tools.base import DEFAULT_MAX_RESULT_CHARS, build_tool
from tools.context import (
    AbortSignal,
    AgentContext,
    PermissionAnswer,
    PermissionPrompt,
    ReadFileState,
    ReadRecord,
    RuntimeState,
    ToolOptions,
    ToolUseContext,
    create_subagent_context,
)
from tools.result import ToolResult


class In(BaseModel):
    x: int = 0


async def _call(inp: In, ctx: ToolUseContext, progress: object) -> ToolResult:
    return ToolResult(inp.x)


def test_minimal_tool_fails_closed() -> None:
    t = build_tool(name="Plain", input_model=In, call=_call)
    inp = In()
    assert t.is_read_only(inp) is False
    assert t.is_concurrency_safe(inp) is False
    assert t.is_destructive(inp) is False
    assert t.is_enabled() is True
    assert t.should_defer is False and t.is_mcp is False
    assert t.max_result_size_chars == DEFAULT_MAX_RESULT_CHARS
    assert t.permission_kind is ToolKind.GENERIC
    assert t.prepare_prompt is None


async def test_default_checks_say_no_objection_and_valid() -> None:
    t = build_tool(name="Plain", input_model=In, call=_call)
    assert await t.check_permissions(In(), ToolUseContext()) is None
    assert await t.validate_input(In(), ToolUseContext()) is None


def test_traits_as_values_or_functions_and_sync_checks() -> None:
    t = build_tool(
        name="Traits",
        input_model=In,
        call=_call,
        is_read_only=True,
        is_concurrency_safe=lambda i: i.x > 0,
        max_result_size_chars=None,
        is_enabled=False,
    )
    assert t.is_read_only(In()) is True
    assert t.is_concurrency_safe(In(x=1)) and not t.is_concurrency_safe(In(x=0))
    assert t.max_result_size_chars == math.inf
    assert t.is_enabled() is False


@pytest.mark.parametrize("name", ["", "bad name", "x(y)"])
def test_invalid_tool_names_rejected(name: str) -> None:
    with pytest.raises(ValueError):
        build_tool(name=name, input_model=In, call=_call)


def test_api_schema_full_and_deferred() -> None:
    t = build_tool(name="T", input_model=In, call=_call, description="d")
    full = t.api_schema()
    assert full["input_schema"]["properties"]["x"]["type"] == "integer"
    deferred = t.api_schema(deferred=True)
    assert deferred["defer_loading"] is True and deferred["input_schema"]["properties"] == {}


async def test_headless_callbacks_deny_every_ask() -> None:
    from permissions.types import Decision, Verdict

    ctx = ToolUseContext()
    prompt = PermissionPrompt("Bash", "t1", {"command": "x"}, Verdict(Decision.ASK, "why"))
    response = await ctx.callbacks.request_permission(prompt)
    assert response.answer is PermissionAnswer.DENY and not response.allowed


def test_read_file_state_is_an_lru() -> None:
    s = ReadFileState(max_entries=2)
    for name in ("a", "b", "c"):
        s.record(ReadRecord(Path(name), "h", 1))
    assert Path("a") not in s and len(s) == 2
    s.get(Path("b"))
    s.record(ReadRecord(Path("d"), "h", 1))
    assert Path("b") in s and Path("c") not in s


def _parent(tmp_path: Path) -> ToolUseContext:
    state = RuntimeState()
    state.read_files.record(ReadRecord(tmp_path / "seen.txt", "h", 1))
    state.messages.append({"role": "user", "content": "parent secret"})
    state.conversation.background_tasks = object()  # type: ignore[assignment]
    state.conversation.bash_cwd = tmp_path
    return ToolUseContext(
        permissions=PermissionContext(cwd=tmp_path),
        options=ToolOptions(tools=(), session_dir=tmp_path / "session"),
        state=state,
        agent=AgentContext(agent_id=None, system_prompt="parent prompt"),
        hooks="the hook runner",
    )


def test_subagent_context_share_and_isolate_choices(tmp_path: Path) -> None:
    parent = _parent(tmp_path)
    child = create_subagent_context(parent, agent_id="a1", system_prompt="child prompt")
    # bubble: the child's asks go to the parent's prompt
    assert child.permissions.mode is PermissionMode.BUBBLE
    assert child.permissions.rules == parent.permissions.rules
    # shared: callbacks, hooks, session dir, the services, the background task manager
    assert child.callbacks is parent.callbacks and child.hooks == "the hook runner"
    assert child.options.session_dir == parent.options.session_dir
    assert child.options.services is parent.options.services
    assert child.state.conversation.background_tasks is parent.state.conversation.background_tasks
    # isolated: messages, read-file state (cloned), the shell cwd value
    assert child.state.messages == []
    assert tmp_path / "seen.txt" in child.state.read_files
    child.state.read_files.record(ReadRecord(tmp_path / "child.txt", "h", 1))
    assert tmp_path / "child.txt" not in parent.state.read_files
    child.state.conversation.bash_cwd = Path("/elsewhere")
    assert parent.state.conversation.bash_cwd == tmp_path
    # agent identity and the frozen prompt
    assert child.agent.agent_id == "a1" and child.agent.parent_agent_id is None
    assert child.agent.system_prompt == "child prompt"


def test_subagent_abort_flows_down_not_up(tmp_path: Path) -> None:
    parent = _parent(tmp_path)
    child = create_subagent_context(parent, agent_id="a1", system_prompt="")
    child.abort.abort("child done")
    assert not parent.abort.aborted
    other = create_subagent_context(parent, agent_id="a2", system_prompt="")
    parent.abort.abort("esc")
    assert other.abort.aborted and other.abort.reason == "esc"


def test_subagent_keeps_every_mode_but_default(tmp_path: Path) -> None:
    for mode in (
        PermissionMode.BYPASS,
        PermissionMode.DONT_ASK,
        PermissionMode.PLAN,
        PermissionMode.ACCEPT_EDITS,
    ):
        parent = _parent(tmp_path).with_mode(mode)
        assert (
            create_subagent_context(parent, agent_id="a", system_prompt="").permissions.mode is mode
        )
    no_bubble = create_subagent_context(
        _parent(tmp_path), agent_id="a", system_prompt="", bubble_permissions=False
    )
    assert no_bubble.permissions.mode is PermissionMode.DEFAULT


def test_abort_signal_child_created_after_abort_is_aborted() -> None:
    parent = AbortSignal()
    parent.abort("x")
    assert parent.child().aborted


def test_input_schema_is_built_once_and_each_caller_gets_its_own_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Counted(BaseModel):
        path: str
        limit: int = 5

    t = build_tool(name="Counted", input_model=Counted, call=_call)
    built = 0
    real = Counted.model_json_schema

    def counting(*args: object, **kwargs: object) -> dict[str, object]:
        nonlocal built
        built += 1
        return real()

    monkeypatch.setattr(Counted, "model_json_schema", counting)
    first = t.input_schema()
    assert "title" not in first and first["required"] == ["path"]
    first["properties"]["path"]["type"] = "changed by a caller"
    second = t.api_schema()["input_schema"]
    assert second["properties"]["path"]["type"] == "string"
    assert built == 1
