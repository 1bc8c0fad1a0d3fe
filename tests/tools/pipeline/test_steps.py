"""Each pipeline step on its own, and the whole pipeline for the simple paths."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from permissions.types import PermissionMode, ToolKind
from tests.tools.pipeline_helpers import (
    TextIn,
    make_ctx,
    read_only_tool,
    rules,
    simple_tool,
)
from tools.base import build_tool
from tools.context import ToolServices, ToolUseContext
from tools.errors import FatalError, InputError, ToolCancelled
from tools.pipeline import steps as p
from tools.pipeline.types import INTERRUPTED_MESSAGE, CallState, ToolCall
from tools.result import ToolResult, ValidationError


def state_for(ctx: ToolUseContext, name: str, inp: Any) -> CallState:
    return CallState(ToolCall("toolu_1", name, inp), ctx)


def test_steps_are_the_design_table_in_order() -> None:
    names = [s.__name__ for s in p.STEPS] + [p.classify_error.__name__]
    assert names == [
        "resolve_tool",
        "check_abort",
        "parse_input",
        "validate_input",
        "start_classifier",
        "backfill_input",
        "pre_tool_hooks",
        "resolve_permission",
        "handle_denial",
        "execute",
        "budget_result",
        "post_tool_hooks",
        "attach_messages",
        "classify_error",
    ]


# 1 resolve_tool ------------------------------------------------------------------------------


async def test_resolve_tool_by_name_then_alias() -> None:
    new = read_only_tool("Agent", aliases=("Task",))
    ctx = make_ctx([read_only_tool("Task2"), new])
    st = state_for(ctx, "Task", {})
    await p.resolve_tool(st)
    assert st.tool is new
    outcome = await p.run_tool_call(ToolCall("t1", "Task", {"text": "hi"}), ctx)
    assert outcome.tool_name == "Agent" and outcome.tool_result["content"] == "hi"


async def test_unknown_tool_is_an_error_result() -> None:
    ctx = make_ctx([read_only_tool()])
    with pytest.raises(InputError):
        await p.resolve_tool(state_for(ctx, "Nope", {}))
    outcome = await p.run_tool_call(ToolCall("t1", "Nope", {}), ctx)
    assert outcome.tool_result == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "No such tool available: Nope",
        "is_error": True,
    }
    assert outcome.error_class == "validation.unknown_tool"


# 2 check_abort -------------------------------------------------------------------------------


async def test_aborted_call_does_no_work() -> None:
    calls: list[str] = []

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        calls.append(inp.text)
        return ToolResult("ran")

    ctx = make_ctx([read_only_tool(call=call)])
    ctx.abort.abort()
    with pytest.raises(ToolCancelled):
        await p.check_abort(state_for(ctx, "Peek", {}))
    outcome = await p.run_tool_call(ToolCall("t1", "Peek", {"text": "x"}), ctx)
    assert calls == []
    assert outcome.cancelled and outcome.is_error
    assert outcome.tool_result["content"] == INTERRUPTED_MESSAGE


# 3 parse_input -------------------------------------------------------------------------------


class ReadIn(BaseModel):
    file_path: str
    limit: int = 10


async def test_parse_error_is_concise() -> None:
    tool = read_only_tool("Read", input_model=ReadIn)
    ctx = make_ctx([tool])
    huge = "z" * 5000
    outcome = await p.run_tool_call(ToolCall("t1", "Read", {"limit": huge}), ctx)
    text = outcome.tool_result["content"]
    assert text == (
        "InputValidationError: Read failed: file_path: Field required; "
        "limit: Input should be a valid integer, unable to parse string as an integer"
    )
    assert outcome.error_class == "validation"


async def test_non_dict_input_is_rejected_cleanly() -> None:
    ctx = make_ctx([read_only_tool("Read", input_model=ReadIn)])
    outcome = await p.run_tool_call(ToolCall("t1", "Read", "just a string"), ctx)  # type: ignore[arg-type]
    assert outcome.is_error
    assert outcome.tool_result["content"].startswith("InputValidationError: Read failed: input:")


async def test_unloaded_deferred_tool_gets_toolsearch_hint() -> None:
    tool = read_only_tool("mcp__db__query", input_model=ReadIn, should_defer=True, is_mcp=True)
    hint = 'call ToolSearch with query "select:mcp__db__query" first, then retry'
    st = state_for(make_ctx([tool]), "mcp__db__query", {"file_path": 3})
    await p.resolve_tool(st)
    with pytest.raises(InputError) as err:
        await p.parse_input(st)
    assert hint in err.value.message
    assert "This tool's schema was not loaded" in err.value.message
    loaded = make_ctx([tool], loaded_deferred=frozenset({"mcp__db__query"}))
    st = state_for(loaded, "mcp__db__query", {"file_path": 3})
    await p.resolve_tool(st)
    with pytest.raises(InputError) as err:
        await p.parse_input(st)
    assert hint not in err.value.message


# 4 validate_input ----------------------------------------------------------------------------


async def test_semantic_validation_stops_the_call() -> None:
    calls: list[str] = []

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        calls.append(inp.text)
        return ToolResult("ran")

    def validate(inp: TextIn, _ctx: Any) -> ValidationError | None:
        return ValidationError("text must not be 'same'", "no_op") if inp.text == "same" else None

    ctx = make_ctx([read_only_tool(call=call, validate_input=validate)])
    outcome = await p.run_tool_call(ToolCall("t1", "Peek", {"text": "same"}), ctx)
    assert outcome.tool_result["content"] == "text must not be 'same'"
    assert outcome.error_class == "validation.no_op"
    assert calls == []


# 5 start_classifier --------------------------------------------------------------------------


class RecordingClassifier:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    async def classify(self, tool_name: str, tool_input: dict[str, Any], ctx: Any) -> None:
        self.seen.append((tool_name, tool_input))
        return None


async def test_classifier_started_only_in_auto_mode_when_configured() -> None:
    clf = RecordingClassifier()
    for mode, services, started in (
        (PermissionMode.DEFAULT, ToolServices(classifier=clf), False),
        (PermissionMode.AUTO, ToolServices(), False),
        (PermissionMode.AUTO, ToolServices(classifier=clf), True),
    ):
        ctx = make_ctx([simple_tool()], mode=mode, services=services)
        st = state_for(ctx, "Plain", {"text": "a"})
        await p.resolve_tool(st)
        await p.parse_input(st)
        await p.start_classifier(st)
        assert (st.classifier_task is not None) is started
        if st.classifier_task is not None:
            assert await st.classifier_task is None
    assert clf.seen == [("Plain", {"text": "a"})]


# 6 backfill_input ----------------------------------------------------------------------------


class PathIn(BaseModel):
    file_path: str


async def test_backfill_feeds_permissions_but_call_gets_the_original(tmp_path: Path) -> None:
    got: list[str] = []

    async def call(inp: PathIn, _c: Any, _p: Any) -> ToolResult:
        got.append(inp.file_path)
        return ToolResult("written")

    def backfill(inp: PathIn, ctx: ToolUseContext) -> PathIn:
        return inp.model_copy(update={"file_path": str(ctx.cwd / inp.file_path)})

    tool = build_tool(
        name="Write",
        input_model=PathIn,
        call=call,
        permission_kind=ToolKind.EDIT,
        backfill_input=backfill,
        permission_paths=lambda inp, _c: (Path(inp.file_path),),
    )
    ctx = make_ctx([tool], cwd=tmp_path, rule_set=rules((f"Edit(/{tmp_path}/**)", "allow")))
    st = state_for(ctx, "Write", {"file_path": "notes.txt"})
    for step in (p.resolve_tool, p.parse_input, p.backfill_input):
        await step(st)
    assert st.backfilled.file_path == str(tmp_path / "notes.txt")
    assert st.parsed.file_path == "notes.txt"
    outcome = await p.run_tool_call(ToolCall("t1", "Write", {"file_path": "notes.txt"}), ctx)
    assert got == ["notes.txt"]
    assert outcome.verdict is not None and outcome.verdict.allowed
    assert outcome.original_input == {"file_path": "notes.txt"}
    assert outcome.effective_input == {"file_path": "notes.txt"}


# 10 execute ----------------------------------------------------------------------------------


async def test_progress_is_forwarded_with_the_tool_use_id() -> None:
    async def call(inp: TextIn, _c: Any, progress: Any) -> ToolResult:
        progress({"line": 1})
        progress({"line": 2})
        return ToolResult("done")

    seen: list[tuple[str, Any]] = []
    ctx = make_ctx([read_only_tool(call=call)], progress=seen)
    outcome = await p.run_tool_call(ToolCall("toolu_9", "Peek", {}), ctx)
    assert seen == [("toolu_9", {"line": 1}), ("toolu_9", {"line": 2})]
    assert outcome.tool_result["content"] == "done"


async def test_abort_during_call_cancels_it() -> None:
    started = asyncio.Event()
    cancelled: list[bool] = []

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return ToolResult("never")

    ctx = make_ctx([read_only_tool(call=call)])
    task = asyncio.ensure_future(p.run_tool_call(ToolCall("t1", "Peek", {}), ctx))
    await started.wait()
    ctx.abort.abort()
    outcome = await task
    assert cancelled == [True]
    assert outcome.cancelled and outcome.tool_result["content"] == INTERRUPTED_MESSAGE


async def test_tool_error_result_is_marked() -> None:
    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        return ToolResult("exit code 2", is_error=True)

    outcome = await p.run_tool_call(
        ToolCall("t1", "Peek", {}), make_ctx([read_only_tool(call=call)])
    )
    assert outcome.is_error and outcome.tool_result["content"] == "exit code 2"


# 11 budget_result ----------------------------------------------------------------------------


async def test_oversized_result_is_persisted(tmp_path: Path) -> None:
    body = "".join(f"line {i}\n" for i in range(100))

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        return ToolResult(body)

    tool = read_only_tool(call=call, max_result_size_chars=100)
    ctx = make_ctx([tool], session_dir=tmp_path)
    outcome = await p.run_tool_call(ToolCall("toolu_big", "Peek", {}), ctx)
    saved = tmp_path / "tool-results" / "toolu_big.txt"
    assert saved.read_text() == body
    assert outcome.persisted_path == saved
    content = outcome.tool_result["content"]
    assert content.startswith("<persisted-output>\nOutput too large (")
    assert f"Full output saved to: {saved}" in content
    assert outcome.output == body  # the transcript keeps the structured output


async def test_empty_output_is_replaced() -> None:
    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        return ToolResult("   ")

    outcome = await p.run_tool_call(
        ToolCall("t1", "Peek", {}), make_ctx([read_only_tool(call=call)])
    )
    assert outcome.tool_result["content"] == "(Peek completed with no output)"
    assert not outcome.is_error


# 13 attach_messages --------------------------------------------------------------------------


async def test_new_messages_and_modifier_are_attached() -> None:
    note = {"role": "user", "content": [{"type": "text", "text": "sub-agent transcript"}]}

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        return ToolResult(
            "ok", new_messages=[note], context_modifier=lambda c: c.with_mode(PermissionMode.PLAN)
        )

    ctx = make_ctx([read_only_tool(call=call)])
    outcome = await p.run_tool_call(ToolCall("t1", "Peek", {}), ctx)
    assert outcome.new_messages == (note,)
    assert outcome.context_modifier is not None
    assert outcome.context_modifier(ctx).permissions.mode is PermissionMode.PLAN
    assert ctx.permissions.mode is PermissionMode.DEFAULT  # the context itself is untouched


# 14 classify_error ---------------------------------------------------------------------------


async def test_exceptions_become_results_without_leaking_into_telemetry() -> None:
    secret = "/home/alice/secret-project/plan.txt"

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        raise FileNotFoundError(2, "No such file or directory", secret)

    events: list[Any] = []
    ctx = make_ctx([read_only_tool(call=call)], events=events)
    outcome = await p.run_tool_call(ToolCall("t1", "Peek", {}), ctx)
    assert outcome.is_error
    assert outcome.tool_result["content"] == (
        f"Error: FileNotFoundError: [Errno 2] No such file or directory: '{secret}'"
    )
    assert outcome.error_class == "tool_exception.FileNotFoundError"
    (event,) = events
    assert event.name == "nerve.tool_error"
    assert event.attributes["error_class"] == "tool_exception.FileNotFoundError"
    assert event.attributes["tool_name"] == "Peek"
    assert event.attributes["phase"] == "execute"
    assert secret not in repr(event) and "alice" not in repr(event)


async def test_timeout_and_tool_error_classes() -> None:
    async def slow(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        raise TimeoutError

    outcome = await p.run_tool_call(
        ToolCall("t1", "Peek", {}), make_ctx([read_only_tool(call=slow)])
    )
    assert outcome.error_class == "timeout"
    assert outcome.tool_result["content"] == "Peek timed out"


async def test_fatal_error_unwinds() -> None:
    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        raise FatalError("session directory vanished")

    with pytest.raises(FatalError):
        await p.run_tool_call(ToolCall("t1", "Peek", {}), make_ctx([read_only_tool(call=call)]))


async def test_unknown_tool_name_never_reaches_telemetry() -> None:
    events: list[Any] = []
    ctx = make_ctx([read_only_tool()], events=events)
    await p.run_tool_call(ToolCall("t1", "rm -rf /home/alice", {}), ctx)
    assert events[0].attributes["tool_name"] == "unknown"
    assert "alice" not in repr(events)
