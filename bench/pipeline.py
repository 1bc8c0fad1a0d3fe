"""Tool pipeline and executor speed.

Run: ``.venv/bin/python bench/pipeline.py``. Prints medians; nothing here asserts.

1. Overhead of the fourteen steps for a no-op read-only tool, 20 permission rules, no hooks
   (target < 150 µs per call).
2. Wall time of 10 concurrency-safe tools that each sleep 200 ms, through the streaming
   executor, against one such tool (target ratio < 1.3×).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402

from permissions.rules import make_rule  # noqa: E402
from permissions.types import PermissionContext, PermissionRule  # noqa: E402
from tools.base import Tool, build_tool  # noqa: E402
from tools.context import ToolOptions, ToolUseContext  # noqa: E402
from tools.pipeline.executor import StreamingToolExecutor  # noqa: E402
from tools.pipeline.steps import run_tool_call  # noqa: E402
from tools.pipeline.types import ToolCall  # noqa: E402
from tools.result import ToolResult  # noqa: E402

OVERHEAD_TARGET_US = 150.0
PARALLEL_TARGET = 1.3
CALLS = 5_000
PARALLEL_ROUNDS = 5
SLEEP_S = 0.2


class NoopIn(BaseModel):
    pattern: str
    path: str | None = None


async def _noop(_inp: NoopIn, _ctx: ToolUseContext, _p: Any) -> ToolResult:
    return ToolResult("ok")


async def _sleep(_inp: NoopIn, _ctx: ToolUseContext, _p: Any) -> ToolResult:
    await asyncio.sleep(SLEEP_S)
    return ToolResult("slept")


def _tool(name: str, call: Any) -> Tool[Any]:
    return build_tool(
        name=name, input_model=NoopIn, call=call, is_read_only=True, is_concurrency_safe=True
    )


def _rules() -> tuple[PermissionRule, ...]:
    specs = [
        ("Bash(git status)", "allow"),
        ("Bash(git diff:*)", "allow"),
        ("Bash(npm run test:*)", "allow"),
        ("Bash(rm:*)", "deny"),
        ("Bash(curl:*)", "ask"),
        ("Bash(git push:*)", "ask"),
        ("Read(/etc/**)", "deny"),
        ("Read(~/.ssh/**)", "deny"),
        ("Edit(/src/**)", "allow"),
        ("Edit(/docs/**)", "allow"),
        ("Edit(/.env)", "deny"),
        ("WebFetch(domain:example.com)", "allow"),
        ("WebFetch(domain:evil.test)", "deny"),
        ("mcp__github", "allow"),
        ("mcp__jira__create_issue", "ask"),
        ("mcp__slack__*", "deny"),
        ("Write(/tmp/**)", "allow"),
        ("NotebookEdit", "ask"),
        ("Agent", "allow"),
        ("Noop(pattern:secret*)", "deny"),
    ]
    return tuple(make_rule(text, behavior, "userSettings") for text, behavior in specs)


def _ctx(tools: list[Tool[Any]]) -> ToolUseContext:
    return ToolUseContext(
        permissions=PermissionContext(rules=_rules(), cwd=ROOT),
        options=ToolOptions(tools=tuple(tools)),
    )


async def bench_overhead() -> tuple[float, float, str]:
    ctx = _ctx([_tool("Noop", _noop)])
    call = ToolCall("toolu_bench", "Noop", {"pattern": "TODO", "path": "src"})
    first = await run_tool_call(call, ctx)
    assert not first.is_error, first.tool_result
    samples = []
    for _ in range(CALLS):
        t0 = time.perf_counter_ns()
        await run_tool_call(call, ctx)
        samples.append(time.perf_counter_ns() - t0)
    samples.sort()
    return (
        statistics.median(samples) / 1000,
        samples[int(len(samples) * 0.95)] / 1000,
        str(first.verdict.reason if first.verdict else ""),
    )


async def _wall(n: int) -> float:
    ctx = _ctx([_tool("Sleep", _sleep)])
    executor = StreamingToolExecutor(ctx, max_parallel=10)
    t0 = time.perf_counter()
    for i in range(n):
        executor.add(ToolCall(f"toolu_{i}", "Sleep", {"pattern": str(i)}))
    outcomes = await executor.finish()
    elapsed = time.perf_counter() - t0
    assert len(outcomes) == n and not any(o.is_error for o in outcomes)
    return elapsed


async def bench_parallel() -> tuple[float, float]:
    ones, tens = [], []
    for _ in range(PARALLEL_ROUNDS):
        ones.append(await _wall(1))
        tens.append(await _wall(10))
    return statistics.median(ones), statistics.median(tens)


async def main() -> None:
    median_us, p95_us, reason = await bench_overhead()
    one, ten = await bench_parallel()
    ratio = ten / one
    rows = [
        (
            "pipeline overhead, no-op read-only tool, 20 rules, no hooks (median)",
            f"{median_us:.1f} µs",
            f"< {OVERHEAD_TARGET_US:.0f} µs",
            median_us < OVERHEAD_TARGET_US,
        ),
        ("pipeline overhead (p95)", f"{p95_us:.1f} µs", "", None),
        ("executor: 1 × 200 ms safe tool (median wall)", f"{one * 1000:.1f} ms", "", None),
        ("executor: 10 × 200 ms safe tools (median wall)", f"{ten * 1000:.1f} ms", "", None),
        (
            "executor: 10 / 1 ratio",
            f"{ratio:.3f}×",
            f"< {PARALLEL_TARGET}×",
            ratio < PARALLEL_TARGET,
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>12}  {'target':>10}  ok")
    for name, value, target, ok in rows:
        mark = "" if ok is None else ("yes" if ok else "NO")
        print(f"{name:<{width}}  {value:>12}  {target:>10}  {mark}")
    print(f"(verdict for the no-op call: {reason}; {CALLS} calls, {PARALLEL_ROUNDS} rounds)")


if __name__ == "__main__":
    asyncio.run(main())
