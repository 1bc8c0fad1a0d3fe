"""Bash tool overhead and memory.

Run: ``.venv/bin/python bench/bash.py``. Prints a table; nothing asserts.

* overhead of ``Bash(true)`` beyond a bare ``bash -c true`` through
  ``asyncio.create_subprocess_exec`` (median of 30; target < 2 ms): calling ``tool.call``
  directly, and through ``tools.pipeline.steps.run_tool_call`` in bypass mode;
* peak RSS growth (VmHWM) of a fresh process running ``seq 1 50000000`` through the tool
  (target < 64 MB).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNS = 30
WARMUP = 5
TARGET_OVERHEAD_MS = 2.0
TARGET_RSS_MB = 64.0

_RSS_CHILD = r"""
import asyncio, json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])

def hwm_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0

from permissions.types import PermissionContext
from tools.builtin.bash import BASH_TOOL, BashInput
from tools.context import ToolOptions, ToolUseContext

async def main():
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolUseContext(
            permissions=PermissionContext(cwd=Path(tmp)),
            options=ToolOptions(session_dir=Path(tmp)),
        )
        await BASH_TOOL.call(BashInput(command="true"), ctx, lambda p: None)  # warm imports
        before = hwm_kb()
        t0 = time.perf_counter()
        res = await BASH_TOOL.call(
            BashInput(command="seq 1 50000000", timeout=600000), ctx, lambda p: None
        )
        elapsed = time.perf_counter() - t0
        after = hwm_kb()
        content = BASH_TOOL.to_content(res.data)
        print(json.dumps({
            "before_kb": before, "after_kb": after, "seconds": elapsed,
            "bytes": res.data.total_bytes, "lines": res.data.total_lines,
            "result_chars": len(content), "spool_bytes": Path(res.data.output_file).stat().st_size,
        }))

asyncio.run(main())
"""


async def _time_ms(fn: Callable[[], Awaitable[object]]) -> float:
    t0 = time.perf_counter()
    await fn()
    return (time.perf_counter() - t0) * 1000


async def _overheads() -> dict[str, list[float]]:
    """Per-round timings; the variants run interleaved so machine load hits them alike."""
    from permissions.types import PermissionContext, PermissionMode
    from tools.builtin.bash import BASH_TOOL, BashInput
    from tools.context import ToolOptions, ToolUseContext

    async def bare() -> None:
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", "true", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        await proc.wait()

    variants: dict[str, Callable[[], Awaitable[object]]] = {"bare bash -c true": bare}
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolUseContext(
            permissions=PermissionContext(cwd=Path(tmp), mode=PermissionMode.BYPASS),
            options=ToolOptions(session_dir=Path(tmp), tools=(BASH_TOOL,)),
        )
        inp = BashInput(command="true")

        async def direct() -> None:
            await BASH_TOOL.call(inp, ctx, lambda p: None)

        variants["Bash tool.call(true)"] = direct
        try:
            from tools.pipeline.steps import run_tool_call
            from tools.pipeline.types import ToolCall
        except ImportError:
            pass
        else:

            async def piped() -> None:
                await run_tool_call(ToolCall("b", "Bash", {"command": "true"}), ctx)

            variants["pipeline run_tool_call(Bash true), bypass"] = piped
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for i in range(WARMUP + RUNS):
            for name, fn in variants.items():
                ms = await _time_ms(fn)
                if i >= WARMUP:
                    samples[name].append(ms)
    return samples


def _rss() -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    samples = asyncio.run(_overheads())
    base = samples["bare bash -c true"]
    print(f"{'measurement (median of ' + str(RUNS) + ')':<46} {'ms':>8} {'overhead ms':>12}")
    print("-" * 70)
    for name, values in samples.items():
        med = statistics.median(values)
        if name.startswith("bare"):
            print(f"{name:<46} {med:>8.2f}")
            continue
        # median of per-round differences: the rounds interleave, so load cancels out
        extra = statistics.median(v - b for v, b in zip(values, base, strict=True))
        print(f"{name:<46} {med:>8.2f} {extra:>12.2f}")
    print(f"(target: tool overhead < {TARGET_OVERHEAD_MS} ms)")
    print()
    rss = _rss()
    growth_mb = (rss["after_kb"] - rss["before_kb"]) / 1024
    print(f"{'seq 1 50000000 through Bash':<46} {'value':>22}")
    print("-" * 70)
    print(f"{'output bytes / lines':<46} {rss['bytes']:>12,} / {rss['lines']:,}")
    print(f"{'wall time':<46} {rss['seconds']:>20.2f} s")
    print(f"{'result chars (to the model)':<46} {rss['result_chars']:>22,}")
    print(f"{'spool file bytes (cap 64 MiB)':<46} {rss['spool_bytes']:>22,}")
    print(f"{'VmHWM before -> after (KB)':<46} {rss['before_kb']:>10,} -> {rss['after_kb']:,}")
    print(f"{'peak RSS growth':<46} {growth_mb:>20.1f} MB  (target < {TARGET_RSS_MB:g} MB)")


if __name__ == "__main__":
    main()
