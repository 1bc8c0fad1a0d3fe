"""TUI benchmarks: first frame, streaming backlog, opening a long conversation.

    .venv/bin/python bench/tui.py            # full run (the stream alone takes ~100 s)
    .venv/bin/python bench/tui.py --quick    # 10,000 tokens instead of 50,000

1. First frame: process start -> the app's first on_mount + refresh, in a fresh subprocess
   (headless), median of 5. Once with a stub session (the TUI alone) and once with the real
   ``AgentSession.create`` (what ``nerve`` pays).
2. Streaming: N tokens of Markdown at 500 tokens/s through ``NerveApp.handle_event``; the
   backlog (deltas produced but not yet rendered) is sampled every 0.25 s.
3. Opening a 2,000-message conversation via /resume: time to the first rendered frame, the
   time to mount an older window when scrolled to the top, and the process RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKENS_PER_SECOND = 500


class StubSession:
    """The smallest SessionPort: scripted by the bench, no model, no tools."""

    session_id = "bench"
    model = "bench-model"

    def __init__(self) -> None:
        self.stream: AsyncIterator[Any] | None = None
        self.messages: list[dict[str, Any]] = []

    @property
    def mode(self) -> str:
        return "default"

    def set_mode(self, mode: str) -> None: ...
    def cycle_mode(self) -> str:
        return "default"

    def set_permission_handler(self, handler: Any) -> None: ...

    async def run_turn(self, prompt: str) -> AsyncIterator[Any]:
        assert self.stream is not None
        async for event in self.stream:
            yield event

    def abort(self) -> None: ...
    async def run_shell(self, command: str) -> str:
        return ""

    def clear(self) -> None: ...
    def rules(self) -> list[Any]:
        return []

    def add_rule(self, behavior: str, rule: str, destination: str = "localSettings") -> None: ...
    def remove_rule(self, behavior: str, rule: str, source: str) -> bool:
        return False

    def tools(self) -> list[Any]:
        return []

    def background_tasks(self) -> list[Any]:
        return []

    def usage_summary(self) -> dict[str, Any]:
        return {"context_tokens": 0, "cost_usd": 0.0}

    def set_model(self, model: str) -> None: ...
    def list_sessions(self) -> list[dict[str, Any]]:
        return []

    async def resume(self, session_id: str) -> list[dict[str, Any]]:
        return self.messages

    async def close(self) -> None: ...


# -- 1. first frame -------------------------------------------------------------------------

CHILD = r"""
import os, sys, time
sys.path.insert(0, {root!r})
t0 = float(os.environ["BENCH_T0"])
kind = sys.argv[1]
if kind == "real":
    from agent_cli.options import RunOptions
    from agent_cli.session import AgentSession
    session = AgentSession.create(RunOptions(), interactive=True, record=False)
else:
    sys.path.insert(0, {bench!r})
    from tui import StubSession
    session = StubSession()
from agent_cli.tui.app import NerveApp

class App(NerveApp):
    async def on_mount(self):
        await super().on_mount()
        self.call_after_refresh(self._done)
    def _done(self):
        print(f"FIRST_FRAME {{time.time() - t0:.4f}}", flush=True)
        self.exit(0)

App(session).run(headless=True)
"""


def first_frame(kind: str, runs: int = 5) -> list[float]:
    code = CHILD.format(root=str(ROOT), bench=str(ROOT / "bench"))
    out: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env.update(
            HOME=tmp,
            NERVE_DATA_DIR=f"{tmp}/data",
            NERVE_CONFIG_DIR=f"{tmp}/.nerve",
            ANTHROPIC_API_KEY="bench",
        )
        for _ in range(runs):
            env["BENCH_T0"] = repr(time.time())
            proc = subprocess.run(
                [sys.executable, "-c", code, kind],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
                timeout=60,
            )
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("FIRST_FRAME")]
            if not line:
                raise RuntimeError(f"first-frame child failed: {proc.stderr[-2000:]}")
            out.append(float(line[0].split()[1]))
    return out


# -- 2. streaming -----------------------------------------------------------------------------


def markdown_tokens(n: int) -> list[str]:
    """``n`` token-sized deltas of varied Markdown: headings, prose, lists, code fences."""
    words = "the quick brown fox jumps over a lazy dog while streaming markdown text".split()
    out: list[str] = []
    i = 0
    while len(out) < n:
        section = i % 4
        if section == 0:
            out.append(f"\n\n## Section {i}\n\n")
        elif section == 1:
            out.append("\n- item ")
        elif section == 2 and i % 12 == 2:
            out += ["\n\n```python\n", "def f(x):\n", "    return x\n", "```\n\n"]
        out += [w + " " for w in words]
        i += 1
    return out[:n]


async def bench_stream(n_tokens: int) -> dict[str, Any]:
    from agent_cli.events import TextDelta, TurnFinished
    from agent_cli.history import PromptHistory
    from agent_cli.tui.app import NerveApp

    tokens = markdown_tokens(n_tokens)
    produced = 0
    session = StubSession()

    async def stream() -> AsyncIterator[Any]:
        nonlocal produced
        start = time.monotonic()
        for i, tok in enumerate(tokens):
            due = start + i / TOKENS_PER_SECOND
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            produced += 1
            yield TextDelta(tok)
        yield TurnFinished("end_turn", 1)

    session.stream = stream()
    with tempfile.TemporaryDirectory() as tmp:
        app = NerveApp(
            session,  # type: ignore[arg-type]
            cwd=Path(tmp),
            history=PromptHistory(tmp, Path(tmp) / "h.jsonl"),
            typing_pause_s=0,
        )
        samples: list[tuple[float, int]] = []
        async with app.run_test(size=(120, 40)) as pilot:
            t0 = time.monotonic()
            app.start_turn("go")
            while app.turn_running:
                samples.append((time.monotonic() - t0, produced - app.stream_stats.rendered))
                await pilot.pause(0.25)
            done = time.monotonic() - t0
            await pilot.pause(0.5)  # let the last chunks settle
            source_len = sum(len(w.source) for w in app.query(".assistant"))  # type: ignore[attr-defined,misc]
    backlogs = [b for _, b in samples]
    tenth = max(1, len(backlogs) // 10)
    return {
        "tokens": n_tokens,
        "expected_s": n_tokens / TOKENS_PER_SECOND,
        "took_s": done,
        "max_backlog": max(backlogs) if backlogs else 0,
        "mean_backlog_first_10pct": statistics.mean(backlogs[:tenth]) if backlogs else 0,
        "mean_backlog_last_10pct": statistics.mean(backlogs[-tenth:]) if backlogs else 0,
        "chars": source_len,
    }


# -- 3. long conversation ---------------------------------------------------------------------


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def long_conversation(n: int) -> list[dict[str, Any]]:
    para = "Here is a paragraph of a typical answer with `code` and **bold** words. " * 4
    msgs: list[dict[str, Any]] = []
    for i in range(n):
        if i % 4 == 0:
            msgs.append({"role": "user", "content": f"Question {i}: what does module {i} do?"})
        elif i % 4 == 1:
            msgs.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"Let me read it.\n\n{para}"},
                        {
                            "type": "tool_use",
                            "id": f"t{i}",
                            "name": "Read",
                            "input": {"file_path": f"src/m{i}.py"},
                        },
                    ],
                }
            )
        elif i % 4 == 2:
            body = "\n".join(f"{k}\tline {k} of module {i}" for k in range(40))
            msgs.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": body}
                    ],
                }
            )
        else:
            msgs.append({"role": "assistant", "content": f"## Module {i}\n\n{para}\n\n- a\n- b\n"})
    return msgs


async def bench_open(n: int) -> dict[str, Any]:
    from agent_cli.history import PromptHistory
    from agent_cli.tui.app import NerveApp

    session = StubSession()
    session.messages = long_conversation(n)
    rss_before = rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        app = NerveApp(
            session,  # type: ignore[arg-type]
            cwd=Path(tmp),
            history=PromptHistory(tmp, Path(tmp) / "h.jsonl"),
        )
        async with app.run_test(size=(120, 40)) as pilot:
            t0 = time.monotonic()
            await app.resume_session("big")
            await pilot.pause()
            opened = time.monotonic() - t0
            older: list[float] = []
            for _ in range(5):
                t1 = time.monotonic()
                await app.conversation.mount_older()
                await pilot.pause()
                older.append(time.monotonic() - t1)
            rss_after = rss_mb()
    return {
        "messages": n,
        "open_s": opened,
        "mount_older_median_s": statistics.median(older),
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stream 10,000 tokens, not 50,000")
    args = parser.parse_args()
    n_tokens = 10_000 if args.quick else 50_000

    stub = first_frame("stub")
    real = first_frame("real")
    stream = asyncio.run(bench_stream(n_tokens))
    opened = asyncio.run(bench_open(2000))

    rows = [
        (
            "first frame, TUI + stub session (median of 5)",
            f"{statistics.median(stub) * 1000:.0f} ms",
            ", ".join(f"{x * 1000:.0f}" for x in stub) + " ms",
        ),
        (
            "first frame, TUI + real AgentSession (median of 5)",
            f"{statistics.median(real) * 1000:.0f} ms",
            ", ".join(f"{x * 1000:.0f}" for x in real) + " ms",
        ),
        (
            f"stream {stream['tokens']:,} tokens at {TOKENS_PER_SECOND}/s",
            f"{stream['took_s']:.1f} s",
            f"expected {stream['expected_s']:.1f} s, {stream['chars']:,} chars",
        ),
        (
            "  max backlog (deltas not yet rendered)",
            str(stream["max_backlog"]),
            "sampled every 0.25 s",
        ),
        (
            "  mean backlog first / last 10%",
            f"{stream['mean_backlog_first_10pct']:.1f} / {stream['mean_backlog_last_10pct']:.1f}",
            "grows"
            if stream["mean_backlog_last_10pct"] > 4 * max(1.0, stream["mean_backlog_first_10pct"])
            else "does not grow",
        ),
        (
            f"open {opened['messages']:,}-message conversation",
            f"{opened['open_s'] * 1000:.0f} ms",
            "to first rendered frame",
        ),
        (
            "  mount 50 older when scrolled to top (median)",
            f"{opened['mount_older_median_s'] * 1000:.0f} ms",
            "",
        ),
        (
            "  RSS after opening",
            f"{opened['rss_after_mb']:.0f} MB",
            f"bench process; {opened['rss_before_mb']:.0f} MB before",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>12}  notes")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>12}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
