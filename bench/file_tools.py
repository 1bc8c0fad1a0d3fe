"""Benchmark of the file tools against ripgrep run directly.

Generates a tree of 20,000 files, then times (median of 7, interleaved):
  * Grep through the tool's ``call`` and through the pipeline (``run_tool_call``) vs ``rg`` as a
    plain subprocess with the same flags (target: tool < 1.2x rg);
  * Glob ``**/*.py`` through the tool (``rg --files`` + stat + sort), vs the pure-Python walk
    fallback, vs ``rg --files`` alone;
  * Read of the first page of a 100 MB file: time and peak Python memory (tracemalloc).

Run: ``.venv/bin/python bench/file_tools.py``
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from permissions.types import PermissionContext  # noqa: E402
from tools.builtin._rg import find_rg  # noqa: E402
from tools.builtin.glob import glob_tool, walk_glob  # noqa: E402
from tools.builtin.grep import grep_tool  # noqa: E402
from tools.builtin.read import read_tool  # noqa: E402
from tools.context import ToolOptions, ToolUseContext  # noqa: E402

N_FILES = 20_000
RUNS = 7
WORDS = "alpha beta gamma delta epsilon zeta theta lambda sigma omega".split()


def make_tree(root: Path) -> None:
    rng = random.Random(7)
    exts = [".py", ".js", ".txt", ".md"]
    for i in range(N_FILES):
        d = root / f"pkg{i % 40:02d}" / f"mod{i % 500:03d}"
        d.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(30)]
        lines.insert(5, f"def function_{i}(x):")
        if i % 97 == 0:
            lines.append("needle_marker found here")
        (d / f"file{i}{exts[i % 4]}").write_text("\n".join(lines) + "\n")


def median_time(fn: Callable[[], Any], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def amedian_time(fn: Callable[[], Awaitable[Any]], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def rg_direct(args: list[str], cwd: Path) -> None:
    subprocess.run([find_rg() or "rg", "--no-config", *args], cwd=cwd, capture_output=True)


async def main() -> None:
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        t0 = time.perf_counter()
        make_tree(root)
        print(f"tree of {N_FILES} files made in {time.perf_counter() - t0:.1f}s")
        ctx = ToolUseContext(
            permissions=PermissionContext(cwd=root),
            options=ToolOptions(tools=(grep_tool, glob_tool, read_tool)),
        )
        vcs = [f"--glob=!{d}" for d in (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")]

        async def tool(t: Any, raw: dict[str, Any]) -> Any:
            result = await t.call(t.input_model.model_validate(raw), ctx, lambda _p: None)
            assert not result.is_error, result.data
            return result

        pipeline: Any = None
        try:
            from tools.pipeline.steps import run_tool_call
            from tools.pipeline.types import ToolCall

            async def pipeline(name: str, raw: dict[str, Any]) -> Any:
                outcome = await run_tool_call(ToolCall("bench", name, raw), ctx)
                assert not outcome.tool_result.get("is_error"), outcome.tool_result
                return outcome
        except ImportError:
            pass

        cases: list[tuple[str, dict[str, Any], list[str]]] = [
            (
                "Grep -l (206 files)",
                {"pattern": "needle_marker"},
                ["--hidden", *vcs, "-l", "-e", "needle_marker", "--", "."],
            ),
            (
                "Grep content, 20k hits, head 250",
                {"pattern": "def function_", "output_mode": "content"},
                ["--hidden", *vcs, "-n", "-e", "def function_", "--", "."],
            ),
            (
                "Grep count",
                {"pattern": "omega", "output_mode": "count"},
                ["--hidden", *vcs, "-c", "-e", "omega", "--", "."],
            ),
        ]
        for label, raw, rg_args in cases:
            await tool(grep_tool, raw)  # warm the page cache
            # Interleaved runs share the machine's noise instead of drifting apart.
            times: dict[str, list[float]] = {"direct": [], "tool": [], "pipe": []}
            for _ in range(RUNS):
                times["direct"].append(median_time(lambda a=rg_args: rg_direct(a, root), 1))  # type: ignore[misc]
                times["tool"].append(await amedian_time(lambda r=raw: tool(grep_tool, r), 1))  # type: ignore[misc]
                if pipeline is not None:
                    times["pipe"].append(await amedian_time(lambda r=raw: pipeline("Grep", r), 1))  # type: ignore[misc]
            direct = statistics.median(times["direct"])
            via_tool = statistics.median(times["tool"])
            rows.append((label, "rg subprocess", f"{direct * 1000:.1f} ms"))
            rows.append(
                (label, "Grep tool call", f"{via_tool * 1000:.1f} ms ({via_tool / direct:.2f}x)")
            )
            if times["pipe"]:
                via_pipe = statistics.median(times["pipe"])
                rows.append(
                    (label, "run_tool_call", f"{via_pipe * 1000:.1f} ms ({via_pipe / direct:.2f}x)")
                )

        glob_raw = {"pattern": "**/*.py"}
        direct = median_time(
            lambda: rg_direct(
                ["--files", "--no-ignore", "--hidden", "--glob", "**/*.py", *vcs, "."], root
            )
        )
        via_tool = await amedian_time(lambda: tool(glob_tool, glob_raw))
        walk = median_time(lambda: walk_glob(root, "**/*.py"))
        rows.append(
            ("Glob **/*.py (5000 hits)", "rg --files subprocess", f"{direct * 1000:.1f} ms")
        )
        rows.append(
            (
                "Glob **/*.py (5000 hits)",
                "Glob tool (rg + stat + sort)",
                f"{via_tool * 1000:.1f} ms",
            )
        )
        rows.append(
            ("Glob **/*.py (5000 hits)", "os.walk fallback (no stat)", f"{walk * 1000:.1f} ms")
        )
        if pipeline is not None:
            via_pipe = await amedian_time(lambda: pipeline("Glob", glob_raw))
            rows.append(("Glob **/*.py (5000 hits)", "run_tool_call", f"{via_pipe * 1000:.1f} ms"))

        big = Path(tmp) / "big.log"
        line = b"2024-01-01 12:00:00 INFO " + b"x" * 75 + b"\n"
        with open(big, "wb") as f:
            block = line * 10_000
            while f.tell() < 100 * 1024 * 1024:
                f.write(block)
        for label, raw in (
            ("Read 100 MB, first page (whole-file read)", {"file_path": str(big)}),
            (
                "Read 100 MB, offset 500000 limit 500",
                {"file_path": str(big), "offset": 500_000, "limit": 500},
            ),
        ):
            tracemalloc.start()
            await tool(read_tool, raw)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            t = await amedian_time(lambda r=raw: tool(read_tool, r))  # type: ignore[misc]
            rows.append((label, "Read tool call", f"{t * 1000:.1f} ms, peak {peak / 1e6:.1f} MB"))

    width = max(len(r[0]) for r in rows)
    width2 = max(len(r[1]) for r in rows)
    print(f"\n{'case':<{width}}  {'how':<{width2}}  median of {RUNS}")
    print("-" * (width + width2 + 30))
    for case, how, value in rows:
        print(f"{case:<{width}}  {how:<{width2}}  {value}")
    print(f"\n(rg: {find_rg()}, cpus: {os.cpu_count()})")


if __name__ == "__main__":
    asyncio.run(main())
