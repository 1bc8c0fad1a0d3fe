"""Transcript speed: resuming a 100 MB session, and appending one record.

Run: ``.venv/bin/python bench/sessions.py [--mb 100]``. Prints a table of medians; nothing here
asserts.

1. Build a realistic transcript of about ``--mb`` MB: turns of a user prompt, an assistant
   message with text and tool_use blocks, one record per tool result (outputs of 1-60 KB,
   with the structured ``toolUseResult`` beside them), read-file-state snapshots.
2. In a fresh subprocess (so peak memory is this work alone): ``TranscriptReader.load`` and
   ``repair_for_resume``; wall time and peak RSS (VmHWM) above the process's baseline; and, in
   another subprocess, the tracemalloc peak (slower, so timed separately). Target < 2 s.
3. The median cost of appending one record (a small user message; a 20 KB tool result), and
   the same with an ``fsync`` after each write for comparison (Nerve does not fsync: a kill
   loses nothing that was written; only a power cut could lose the page cache).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.transcripts.transcript import TranscriptWriter  # noqa: E402

LOAD_TARGET_S = 2.0
ROUNDS = 3
APPENDS = 2_000


def _output(rng: random.Random, size: int) -> str:
    words = ["def", "return", "self", "import", "error:", "line", "value", "{}", "==", "path"]
    lines = []
    n = 0
    while n < size:
        line = f"{rng.randint(1, 9999):>6}\t" + " ".join(rng.choices(words, k=rng.randint(3, 14)))
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)


def build(path: Path, target_bytes: int) -> tuple[int, int]:
    """Write a transcript of about ``target_bytes``; returns (records, tool calls)."""
    rng = random.Random(7)
    w = TranscriptWriter(path, session_id="bench", cwd=Path("/home/dev/project"), git_branch="main")
    calls = 0
    turn = 0
    while path.stat().st_size < target_bytes:
        turn += 1
        w.user({"role": "user", "content": f"Turn {turn}: fix the failing test in module {turn}"})
        for step in range(rng.randint(1, 4)):
            ids = [f"toolu_{turn:05d}_{step}_{k}" for k in range(rng.randint(1, 3))]
            blocks: list[dict[str, Any]] = [{"type": "text", "text": _output(rng, 300)}]
            blocks += [
                {
                    "type": "tool_use",
                    "id": i,
                    "name": "Bash",
                    "input": {"command": f"pytest tests/test_{turn}.py -x -q"},
                }
                for i in ids
            ]
            w.assistant(
                {
                    "role": "assistant",
                    "content": blocks,
                    "id": f"msg_{turn}_{step}",
                    "model": "claude-sonnet-4-5",
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 1200, "output_tokens": 300},
                }
            )
            for i in ids:
                calls += 1
                out = _output(rng, rng.choice((1_000, 5_000, 20_000, 60_000)))
                w.user(
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": i, "content": out}],
                    },
                    toolUseResult={
                        "tool_use_id": i,
                        "tool_name": "Bash",
                        "output": {"stdout": out, "stderr": "", "exit_code": 0},
                    },
                )
            if step % 2 == 0:
                files = [
                    {
                        "path": f"/home/dev/project/m{k}.py",
                        "content_hash": f"{k:064x}",
                        "mtime_ns": 1_700_000_000_000_000_000 + k,
                        "partial": False,
                    }
                    for k in range(min(turn, 50))
                ]
                w.meta("read-file-state", files=files)
        w.assistant({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    w.close()
    return sum(1 for _ in open(path, "rb")), calls


_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from agent_cli.transcripts.transcript import TranscriptReader
from agent_cli.session.resume import repair_for_resume

def vm(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0

mode = sys.argv[3]
if mode == "tracemalloc":
    import tracemalloc
    tracemalloc.start()
base = vm("VmHWM")
t = time.perf_counter()
reader = TranscriptReader.load(Path(sys.argv[1]))
t_load = time.perf_counter() - t
messages = repair_for_resume(reader, None)
total = time.perf_counter() - t
out = {"load": t_load, "total": total, "messages": len(messages), "hwm": vm("VmHWM") - base,
       "warnings": len(reader.warnings)}
if mode == "tracemalloc":
    out["traced_peak"] = tracemalloc.get_traced_memory()[1]
print(json.dumps(out))
"""


def _child(path: Path, mode: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(ROOT), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def _appends(directory: Path, payload: dict[str, Any], fsync: bool) -> float:
    w = TranscriptWriter(
        directory / f"append-{fsync}-{len(str(payload))}.jsonl", session_id="bench", cwd=directory
    )
    times = []
    for _ in range(APPENDS if not fsync else APPENDS // 10):
        t = time.perf_counter_ns()
        w.user(payload)
        if fsync:
            assert w._fd is not None
            os.fsync(w._fd)
        times.append(time.perf_counter_ns() - t)
    w.close()
    return statistics.median(times) / 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nerve-bench-sessions-") as tmp:
        d = Path(tmp)
        path = d / "session.jsonl"
        t = time.perf_counter()
        n_records, calls = build(path, int(args.mb * 1_000_000))
        size = path.stat().st_size
        print(
            f"built {size / 1e6:.1f} MB, {n_records} records, {calls} tool calls "
            f"in {time.perf_counter() - t:.1f} s\n"
        )
        runs = [_child(path, "plain") for _ in range(ROUNDS)]
        traced = _child(path, "tracemalloc")
        small = {"role": "user", "content": "a short prompt of a few words"}
        big = {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": _output(random.Random(1), 20_000),
                }
            ],
        }
        rows = [
            (
                "load (TranscriptReader.load)",
                f"{statistics.median(r['load'] for r in runs):.2f} s",
                f"< {LOAD_TARGET_S:.0f} s for both",
            ),
            (
                "load + repair_for_resume",
                f"{statistics.median(r['total'] for r in runs):.2f} s",
                f"{runs[0]['messages']} messages",
            ),
            (
                "peak RSS growth (VmHWM)",
                f"{statistics.median(r['hwm'] for r in runs) / 1e6:.0f} MB",
                f"file {size / 1e6:.0f} MB",
            ),
            (
                "tracemalloc peak",
                f"{traced['traced_peak'] / 1e6:.0f} MB",
                f"(traced run took {traced['total']:.2f} s)",
            ),
            ("append small record", f"{_appends(d, small, False):.1f} µs", "median"),
            ("append 20 KB tool result", f"{_appends(d, big, False):.1f} µs", "median"),
            ("append small + fsync", f"{_appends(d, small, True):.1f} µs", "not done by Nerve"),
        ]
        width = max(len(r[0]) for r in rows)
        print(f"{'measure':<{width}}  {'median':>10}  note")
        for name, value, note in rows:
            print(f"{name:<{width}}  {value:>10}  {note}")


if __name__ == "__main__":
    main()
