"""TUI benchmarks: first frame, streaming backlog, opening a long conversation.

    .venv/bin/python bench/tui.py            # full run (the stream alone takes ~100 s)
    .venv/bin/python bench/tui.py --quick    # 10,000 tokens instead of 50,000
    .venv/bin/python bench/tui.py --first-frame   # start-up only (seconds)
    .venv/bin/python bench/tui.py --imports  # what is loaded at nerve's first frame

1. First frame: process start -> the app's first painted frame, and -> session ready, for the
   real ``nerve`` command (no arguments) on a pty, median of 5, via the app's bench hook
   (``NERVE_BENCH_FIRST_FRAME``, see ``agent_cli/tui/bench_hook.py``). Also the TUI alone over a
   stub session, and the list of modules loaded at the first frame (``--imports``).
2. Streaming: N tokens of Markdown at 500 tokens/s through ``EventView.handle``
   (``agent_cli/tui/event_view.py``); the backlog (deltas produced but not yet rendered) is
   sampled every 0.25 s.
3. Opening a 2,000-message conversation via /resume: time to the first rendered frame, the
   time to mount an older window when scrolled to the top, and the process RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
FRAME_TARGET_MS = 200.0  # process start -> first painted frame
READY_TARGET_MS = 350.0  # process start -> session ready (settings, tools, hooks built)


def _verdict(frame_ms: float, ready_ms: float) -> str:
    ok = frame_ms <= FRAME_TARGET_MS and ready_ms <= READY_TARGET_MS
    return f"{'meets' if ok else 'MISSES'} (first frame, session ready; median)"


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

NERVE = Path(sys.executable).with_name("nerve")

CHILD = r"""
import os, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {bench!r})
from tui import StubSession
from agent_cli.tui.app import NerveApp
NerveApp(StubSession()).run()
"""


def run_in_pty(argv: list[str], env: dict[str, str], cwd: str, timeout: float = 60) -> float:
    """Run ``argv`` on a fresh 120x40 pty, draining its output; returns the spawn time.

    A pty, not headless mode: this is what a user's terminal gives ``nerve``.
    """
    import fcntl
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    t0 = time.time()
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True
    )
    os.close(slave)
    deadline = time.monotonic() + timeout
    tail = b""
    try:
        while proc.poll() is None or select.select([master], [], [], 0)[0]:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"{argv[0]} did not exit in {timeout} s")
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the pty
                    break
                tail = (tail + chunk)[-4000:]
        proc.wait(timeout=5)
    finally:
        os.close(master)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {tail.decode(errors='replace')}")
    return t0


def start_env(tmp: str) -> dict[str, str]:
    """The environment of a measured start: this one without ``ANTHROPIC_``/``NERVE_``
    variables, HOME and the data and config dirs in ``tmp``, a dummy key and a loopback base
    URL nothing listens on (no request is made before a prompt)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "NERVE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure cached bytecode, as installed
    env.update(
        HOME=tmp,
        NERVE_DATA_DIR=f"{tmp}/data",
        NERVE_CONFIG_DIR=f"{tmp}/.nerve",
        CLAUDE_CONFIG_DIR=f"{tmp}/.claude",
        ANTHROPIC_API_KEY="bench-dummy-key",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # discard port: never contacted
        TERM="xterm-256color",
    )
    return env


def first_frame(kind: str, runs: int = 5) -> list[tuple[float, float, float, float]]:
    """(first frame, session ready) seconds after process start, then the process's CPU
    seconds (user + system, all threads) at each: the figure a busy machine inflates least.

    ``nerve``: the real entry point (``nerve`` with no arguments), a dummy API key and a
    loopback base URL nothing listens on (no request is made before a prompt). ``stub``: the
    TUI alone over a stub session, for comparison. Both through the app's bench hook.
    """
    out: list[tuple[float, float, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        env = start_env(tmp)
        project = Path(tmp) / "project"
        project.mkdir()
        if kind == "nerve":
            argv = [str(NERVE)]
        else:
            argv = [sys.executable, "-c", CHILD.format(root=str(ROOT), bench=str(ROOT / "bench"))]
        for i in range(-1, runs):  # one warm-up run (the .pyc files, the OS caches)
            record_path = Path(tmp) / f"frame-{i}.json"
            env["NERVE_BENCH_FIRST_FRAME"] = str(record_path)
            t0 = run_in_pty(argv, env, str(project))
            record = json.loads(record_path.read_text())
            if record.get("error"):
                raise RuntimeError(f"session failed to start: {record['error']}")
            if i >= 0:
                out.append(
                    (record["t"] - t0, record["ready"] - t0, record["cpu"], record["ready_cpu"])
                )
    return out


def import_list() -> list[str]:
    """Our modules and third-party top-level packages loaded at ``nerve``'s first frame."""
    with tempfile.TemporaryDirectory() as tmp:
        record_path = Path(tmp) / "frame.json"
        env = start_env(tmp)
        env["NERVE_BENCH_FIRST_FRAME"] = str(record_path)
        run_in_pty([str(NERVE)], env, tmp)
        modules: list[str] = json.loads(record_path.read_text())["modules"]
    stdlib = sys.stdlib_module_names
    ours = [
        m for m in modules if m.split(".")[0] in ("agent_cli", "tools", "permissions", "config")
    ]
    third = sorted(
        {m.split(".")[0] for m in modules}
        - stdlib
        - {"agent_cli", "tools", "permissions", "config"}
    )
    return [*ours, *(f"{t} (package)" for t in third if not t.startswith("_"))]


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
    from agent_cli.loop.events import TextDelta, TurnFinished
    from agent_cli.transcripts.history import PromptHistory
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
    from agent_cli.transcripts.history import PromptHistory
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
    parser.add_argument("--first-frame", action="store_true", help="only the start-up measures")
    parser.add_argument("--imports", action="store_true", help="list modules at the first frame")
    args = parser.parse_args()
    n_tokens = 10_000 if args.quick else 50_000
    if args.imports:
        print("\n".join(import_list()))
        return 0

    def ms(xs: list[float]) -> tuple[str, str]:
        return f"{statistics.median(xs) * 1000:.0f} ms", ", ".join(f"{x * 1000:.0f}" for x in xs)

    stub = first_frame("stub")
    real = first_frame("nerve")
    frame, ready = (statistics.median(xs) * 1000 for xs in list(zip(*real, strict=True))[:2])
    rows = [
        ("first frame, nerve (pty, median of 5)", *ms([r[0] for r in real])),
        ("  session ready, nerve (median of 5)", *ms([r[1] for r in real])),
        ("  targets", f"<= {FRAME_TARGET_MS:.0f} / {READY_TARGET_MS:.0f}", _verdict(frame, ready)),
        ("  CPU at first frame (user+sys)", *ms([r[2] for r in real])),
        ("  CPU at session ready (user+sys)", *ms([r[3] for r in real])),
        ("first frame, TUI + stub session (median of 5)", *ms([r[0] for r in stub])),
        ("  CPU at first frame (user+sys)", *ms([r[2] for r in stub])),
    ]
    if not args.first_frame:
        stream = asyncio.run(bench_stream(n_tokens))
        opened = asyncio.run(bench_open(2000))
        rows += [
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
                f"{stream['mean_backlog_first_10pct']:.1f} / "
                f"{stream['mean_backlog_last_10pct']:.1f}",
                "grows"
                if stream["mean_backlog_last_10pct"]
                > 4 * max(1.0, stream["mean_backlog_first_10pct"])
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
