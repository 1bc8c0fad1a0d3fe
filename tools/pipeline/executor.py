"""The streaming executor: starts tool calls while the model is still streaming.

Each ``tool_use`` block is ``add``-ed the moment it closes. A run of consecutive calls whose
``is_concurrency_safe(input)`` is true runs in parallel (at most ``max_parallel`` at once); any
other call is a barrier: it waits for everything before it and holds back everything after it.
Results come out in call order.

Context modifiers: a barrier's modifier is applied before the next call starts; the modifiers of
a parallel batch are queued and applied in call order once no call of the batch is running, so
parallel calls never race over what later calls see. Calls that start together see the same
context.

Abort: running calls see the abort signal and return cancelled results; queued calls and calls
added later get a cancelled result without running. Every call gets exactly one outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import field
from typing import Any

from tools.context import ToolUseContext
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import CallOutcome, ToolCall, cancelled_outcome, find_tool
from tools.records import datarecord
from tools.result import ContextModifier

__all__ = ["StreamingToolExecutor", "is_call_concurrency_safe"]


def is_call_concurrency_safe(call: ToolCall, ctx: ToolUseContext) -> bool:
    """Safe only if the tool is known, the input parses and the tool says so (else: barrier)."""
    tool = find_tool(ctx.options.tools, call.name)
    if tool is None:
        return False
    try:
        parsed = tool.input_model.model_validate(call.input)
        return bool(tool.is_concurrency_safe(parsed))
    except Exception:
        return False


@datarecord(slots=True)
class _Entry:
    index: int
    call: ToolCall
    safe: bool
    outcome: asyncio.Future[CallOutcome]
    started: bool = False
    ctx: ToolUseContext | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)


class StreamingToolExecutor:
    """Schedules one assistant message's tool calls (see the module docstring)."""

    def __init__(self, ctx: ToolUseContext, *, max_parallel: int = 10) -> None:
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        self._ctx = ctx
        self._max_parallel = max_parallel
        self._entries: list[_Entry] = []
        self._next = 0  # first entry not started yet
        self._running: set[int] = set()
        self._batch_mods: list[tuple[int, ContextModifier]] = []
        self._closed = False
        self._aborted = False
        self._changed = asyncio.Event()
        self._fatal: BaseException | None = None

    @property
    def current_context(self) -> ToolUseContext:
        """The context after every modifier applied so far (the loop keeps the final one)."""
        return self._ctx

    @property
    def aborted(self) -> bool:
        return self._aborted or self._ctx.abort.aborted

    def add(self, call: ToolCall) -> None:
        """Queue a call (as its tool_use block closes); it starts as soon as it may."""
        if self._closed:
            raise RuntimeError("add() after finish()")
        loop = asyncio.get_running_loop()
        entry = _Entry(
            index=len(self._entries),
            call=call,
            safe=is_call_concurrency_safe(call, self._ctx),
            outcome=loop.create_future(),
        )
        self._entries.append(entry)
        self._pump()
        self._signal()

    def abort(self, reason: str = "interrupted") -> None:
        """Cancel everything: running calls return cancelled results, queued ones never run."""
        self._aborted = True
        self._ctx.abort.abort(reason)
        for i in self._running:
            entry_ctx = self._entries[i].ctx
            if entry_ctx is not None:
                entry_ctx.abort.abort(reason)
        self._pump()

    async def results(self) -> AsyncIterator[CallOutcome]:
        """Outcomes in call order, as they become available, until ``finish`` and all are out."""
        i = 0
        while True:
            while i < len(self._entries):
                yield await asyncio.shield(self._entries[i].outcome)
                i += 1
            if self._closed:
                return
            self._changed.clear()
            await self._changed.wait()

    async def finish(self) -> list[CallOutcome]:
        """No more calls: wait for all of them; returns every outcome in call order.

        Re-raises a ``FatalError`` (or other unwinding error) a call ended with.
        """
        self._closed = True
        self._signal()
        outcomes = [await asyncio.shield(e.outcome) for e in self._entries]
        if self._fatal is not None:
            raise self._fatal
        return outcomes

    # -- scheduling ---------------------------------------------------------------------------

    def _signal(self) -> None:
        self._changed.set()

    def _pump(self) -> None:
        """Start whatever may start now, strictly in call order."""
        if self.aborted:
            while self._next < len(self._entries):
                entry = self._entries[self._next]
                entry.started = True
                entry.outcome.set_result(cancelled_outcome(entry.call))
                self._next += 1
            self._signal()
            return
        while self._next < len(self._entries):
            entry = self._entries[self._next]
            if entry.safe:
                running_barrier = any(not self._entries[i].safe for i in self._running)
                if running_barrier or len(self._running) >= self._max_parallel:
                    return
            elif self._running:
                return
            self._start(entry)
            self._next += 1
            if not entry.safe:
                return  # a barrier holds back everything after it

    def _start(self, entry: _Entry) -> None:
        entry.started = True
        entry.ctx = self._ctx
        self._running.add(entry.index)
        entry.task = asyncio.ensure_future(self._run(entry))

    async def _run(self, entry: _Entry) -> None:
        assert entry.ctx is not None
        try:
            outcome = await run_tool_call(entry.call, entry.ctx)
        except asyncio.CancelledError:
            outcome = cancelled_outcome(entry.call)
        except BaseException as exc:
            # A FatalError unwinds the turn: the call still gets a result, then it propagates.
            self._fatal = self._fatal or exc
            self._finish_entry(entry, cancelled_outcome(entry.call, f"Error: {type(exc).__name__}"))
            return
        self._finish_entry(entry, outcome)

    def _finish_entry(self, entry: _Entry, outcome: CallOutcome) -> None:
        self._running.discard(entry.index)
        modifier = outcome.context_modifier
        if modifier is not None:
            if entry.safe:
                self._batch_mods.append((entry.index, modifier))
            else:
                self._apply(modifier)
        if not self._running and self._batch_mods:
            # The parallel batch has ended: its modifiers, in call order.
            for _, mod in sorted(self._batch_mods, key=lambda im: im[0]):
                self._apply(mod)
            self._batch_mods.clear()
        if not entry.outcome.done():
            entry.outcome.set_result(outcome)
        self._pump()
        self._signal()

    def _apply(self, modifier: ContextModifier) -> None:
        try:
            ctx: Any = modifier(self._ctx)
        except Exception:
            return  # a broken modifier leaves the context as it was
        if isinstance(ctx, ToolUseContext):
            self._ctx = ctx
