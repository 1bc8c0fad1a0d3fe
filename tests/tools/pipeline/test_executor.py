"""The streaming executor: overlap and order shown by recorded start/end events.

Tools coordinate through events (``wait_start``: do not go on before that call started;
``wait_end``: do not end before that call ended), so every order asserted here is forced by
construction, never by timing.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel

from permissions.types import PermissionMode
from tests.tools.pipeline_helpers import make_ctx, rules, simple_tool, wait_for
from tools.base import Tool, build_tool
from tools.context import ToolUseContext
from tools.pipeline.executor import StreamingToolExecutor, is_call_concurrency_safe
from tools.pipeline.types import INTERRUPTED_MESSAGE, ToolCall
from tools.result import ToolResult


class StepIn(BaseModel):
    label: str
    wait_start: str | None = None
    wait_end: str | None = None
    block: bool = False
    mark: bool = False


def _trail(ctx: ToolUseContext) -> tuple[str, ...]:
    """The labels of the modifiers applied to ``ctx``, in order (``mark`` below)."""
    return tuple(ctx.options.model.split())


class Recorder:
    """Builds a parallel-safe tool ``Par`` and a serial tool ``Ser`` sharing one event log."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.seen_trail: dict[str, tuple[str, ...]] = {}
        self.cancelled: list[str] = []
        self._started: dict[str, asyncio.Event] = {}
        self._ended: dict[str, asyncio.Event] = {}

    def _ev(self, table: dict[str, asyncio.Event], label: str) -> asyncio.Event:
        return table.setdefault(label, asyncio.Event())

    async def call(self, inp: StepIn, ctx: ToolUseContext, _p: Any) -> ToolResult:
        self.log.append(f"start {inp.label}")
        self.seen_trail[inp.label] = _trail(ctx)
        self._ev(self._started, inp.label).set()
        try:
            if inp.wait_start:
                await wait_for(self._ev(self._started, inp.wait_start), f"start {inp.wait_start}")
            if inp.wait_end:
                await wait_for(self._ev(self._ended, inp.wait_end), f"end {inp.wait_end}")
            if inp.block:
                await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(inp.label)
            raise
        self.log.append(f"end {inp.label}")
        self._ev(self._ended, inp.label).set()
        label = inp.label

        def mark(c: ToolUseContext) -> ToolUseContext:
            # The trail of modifiers applied so far rides in a field no tool here reads.
            return replace(c, options=replace(c.options, model=f"{c.options.model} {label}"))

        return ToolResult(f"done {label}", context_modifier=mark if inp.mark else None)

    def tools(self) -> list[Tool[Any]]:
        par = build_tool(
            name="Par",
            input_model=StepIn,
            call=self.call,
            is_read_only=True,
            is_concurrency_safe=True,
        )
        ser = build_tool(name="Ser", input_model=StepIn, call=self.call)
        return [par, ser]

    def ctx(self, *extra_tools: Tool[Any]) -> ToolUseContext:
        return make_ctx(
            [*self.tools(), *extra_tools], rule_set=rules(("Ser", "allow"), ("Plain", "allow"))
        )


def call(tid: str, name: str, **inp: Any) -> ToolCall:
    return ToolCall(tid, name, {"label": tid, **inp})


async def test_parallel_run_then_barrier() -> None:
    rec = Recorder()
    ex = StreamingToolExecutor(rec.ctx())
    ex.add(call("a", "Par", wait_start="b"))
    ex.add(call("b", "Par", wait_end="a"))
    ex.add(call("c", "Ser"))
    outcomes = await ex.finish()
    assert rec.log == ["start a", "start b", "end a", "end b", "start c", "end c"]
    assert [o.tool_use_id for o in outcomes] == ["a", "b", "c"]
    assert [o.tool_result["content"] for o in outcomes] == ["done a", "done b", "done c"]


async def test_barrier_holds_back_later_parallel_calls() -> None:
    rec = Recorder()
    ex = StreamingToolExecutor(rec.ctx())
    ex.add(call("s", "Ser"))
    ex.add(call("a", "Par", wait_start="b"))
    ex.add(call("b", "Par"))
    await ex.finish()
    assert rec.log[:2] == ["start s", "end s"]
    assert set(rec.log[2:4]) == {"start a", "start b"}


async def test_minimal_tool_is_a_barrier() -> None:
    rec = Recorder()

    async def plain_call(inp: Any, _c: Any, _p: Any) -> ToolResult:
        rec.log.append("plain")
        return ToolResult("plain")

    ex = StreamingToolExecutor(rec.ctx(simple_tool(call=plain_call)))
    ex.add(call("a", "Par"))
    ex.add(ToolCall("p", "Plain", {}))
    ex.add(call("b", "Par"))
    await ex.finish()
    assert rec.log == ["start a", "end a", "plain", "start b", "end b"]


async def test_results_stream_in_call_order() -> None:
    rec = Recorder()
    ex = StreamingToolExecutor(rec.ctx())
    seen: list[str] = []

    async def consume() -> None:
        async for outcome in ex.results():
            seen.append(outcome.tool_use_id)

    consumer = asyncio.ensure_future(consume())
    ex.add(call("a", "Par", wait_end="b"))  # a ends after b
    await asyncio.sleep(0)
    ex.add(call("b", "Par"))  # added while a is running: joins the batch
    await ex.finish()
    await asyncio.wait_for(consumer, 5)
    assert rec.log == ["start a", "start b", "end b", "end a"]
    assert seen == ["a", "b"]


async def test_parallelism_is_bounded() -> None:
    rec = Recorder()
    ex = StreamingToolExecutor(rec.ctx(), max_parallel=2)
    ex.add(call("a", "Par", wait_start="b"))
    ex.add(call("b", "Par", wait_end="a"))
    ex.add(call("c", "Par"))
    await ex.finish()
    assert rec.log.index("start c") > rec.log.index("end a")
    running = peak = 0
    for entry in rec.log:
        running += 1 if entry.startswith("start") else -1
        peak = max(peak, running)
    assert peak == 2


async def test_serial_modifier_applies_before_the_next_call() -> None:
    rec = Recorder()
    ex = StreamingToolExecutor(rec.ctx())
    ex.add(call("s1", "Ser", mark=True))
    ex.add(call("s2", "Ser"))
    ex.add(call("p", "Par"))
    await ex.finish()
    assert rec.seen_trail == {"s1": (), "s2": ("s1",), "p": ("s1",)}


async def test_parallel_modifiers_queue_in_call_order_until_the_batch_ends() -> None:
    rec = Recorder()
    ex = StreamingToolExecutor(rec.ctx())
    ex.add(call("a", "Par", mark=True, wait_end="b"))  # b finishes first
    ex.add(call("b", "Par", mark=True, wait_start="a"))
    ex.add(call("c", "Ser", mark=True))
    await ex.finish()
    assert rec.seen_trail["a"] == () and rec.seen_trail["b"] == ()
    assert rec.seen_trail["c"] == ("a", "b")
    assert _trail(ex.current_context) == ("a", "b", "c")


async def test_abort_mid_batch_gives_exactly_one_result_per_call() -> None:
    rec = Recorder()
    ex = StreamingToolExecutor(rec.ctx())
    ex.add(call("a", "Par", block=True))
    ex.add(call("b", "Par", block=True, wait_start="a"))
    ex.add(call("c", "Ser"))
    await wait_for(rec._ev(rec._started, "b"), "b to start")
    ex.abort()
    ex.add(call("d", "Par"))  # arrives after the abort
    outcomes = await ex.finish()
    assert [o.tool_use_id for o in outcomes] == ["a", "b", "c", "d"]
    assert all(o.cancelled and o.is_error for o in outcomes)
    assert all(o.tool_result["content"] == INTERRUPTED_MESSAGE for o in outcomes)
    assert sorted(rec.cancelled) == ["a", "b"]
    assert "start c" not in rec.log and "start d" not in rec.log


async def test_external_abort_signal_cancels_queued_calls() -> None:
    rec = Recorder()
    ctx = rec.ctx()
    ex = StreamingToolExecutor(ctx)
    ex.add(call("s", "Ser", block=True))
    ex.add(call("t", "Ser"))
    await wait_for(rec._ev(rec._started, "s"), "s to start")
    ctx.abort.abort()  # Ctrl+C through the turn's signal, not executor.abort()
    outcomes = await ex.finish()
    assert [o.cancelled for o in outcomes] == [True, True]
    assert rec.log == ["start s"]


async def test_unparseable_or_failing_safety_is_a_barrier() -> None:
    rec = Recorder()
    ctx = rec.ctx()
    assert is_call_concurrency_safe(call("a", "Par"), ctx)
    assert not is_call_concurrency_safe(ToolCall("x", "Par", {"nope": 1}), ctx)
    assert not is_call_concurrency_safe(ToolCall("x", "Unknown", {}), ctx)

    def explode(_inp: Any) -> bool:
        raise RuntimeError("cannot tell")

    odd = build_tool(name="Odd", input_model=StepIn, call=rec.call, is_concurrency_safe=explode)
    assert not is_call_concurrency_safe(call("o", "Odd"), make_ctx([odd]))


async def test_add_after_finish_is_refused() -> None:
    ex = StreamingToolExecutor(make_ctx([]))
    assert await ex.finish() == []
    with pytest.raises(RuntimeError):
        ex.add(ToolCall("late", "Par", {}))


async def test_denied_calls_still_report_in_order() -> None:
    rec = Recorder()
    ctx = make_ctx(rec.tools(), mode=PermissionMode.DEFAULT)  # Ser is not allowed: headless deny
    ex = StreamingToolExecutor(ctx)
    ex.add(call("a", "Par"))
    ex.add(call("s", "Ser"))
    ex.add(call("b", "Par"))
    outcomes = await ex.finish()
    assert [(o.tool_use_id, o.is_error) for o in outcomes] == [
        ("a", False),
        ("s", True),
        ("b", False),
    ]
    assert "start s" not in rec.log


async def test_fatal_error_still_answers_the_call_then_unwinds() -> None:
    from tools.errors import FatalError

    async def boom(inp: Any, _c: Any, _p: Any) -> ToolResult:
        raise FatalError("session directory vanished")

    fatal = build_tool(
        name="Boom", input_model=StepIn, call=boom, is_read_only=True, is_concurrency_safe=True
    )
    ex = StreamingToolExecutor(make_ctx([fatal]))
    ex.add(call("f", "Boom"))
    seen = []
    with pytest.raises(FatalError):
        await ex.finish()
    async for outcome in ex.results():
        seen.append((outcome.tool_use_id, outcome.is_error))
    assert seen == [("f", True)]


def test_tool_call_from_api_block() -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}}
    assert ToolCall.from_block(block) == ToolCall("toolu_1", "Read", {"file_path": "/a"})
