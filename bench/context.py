"""Context management: checkpoint cost per Edit, compaction of a 150k-token conversation,
resuming a 100 MB transcript with a boundary near its end.

Run: ``.venv/bin/python bench/context.py [--mb 100]``. Prints a table of medians; nothing here
asserts.

1. Checkpoint overhead per Edit: the Edit tool through the whole pipeline on a 10 KB file,
   with and without the checkpoint store (each Edit the first of its turn, so its earlier
   content is saved and recorded in a transcript every time; and a second Edit in the same
   turn, which saves nothing). Target < 2 ms.
2. Compaction of a 150k-token conversation, time outside the model: the loop's compaction with
   a model port that answers at once (estimating, the summary request, the boundary and summary
   records, five files re-attached), and the same through the real SDK against the scripted
   server on loopback (adds serialising the ~600 KB request and HTTP).
3. Resume of a 100 MB transcript (``bench/sessions.py``'s) in a fresh process, as it is and with
   a compaction boundary and 20 more turns appended: ``TranscriptReader.load`` +
   ``repair_for_resume``, wall time and peak RSS growth.
4. The first request after resuming the 100 MB transcript without a boundary: its size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.loop.checkpoints import CheckpointStore  # noqa: E402
from agent_cli.loop.compaction_prompt import SUMMARY_MARKER  # noqa: E402
from agent_cli.loop.context_meter import estimate_tokens  # noqa: E402
from agent_cli.model.turn import AssistantTurn  # noqa: E402
from agent_cli.model.usage import Usage  # noqa: E402
from agent_cli.transcripts.tail import write_boundary  # noqa: E402
from agent_cli.transcripts.transcript import TranscriptWriter  # noqa: E402
from permissions.types import PermissionContext, PermissionMode  # noqa: E402
from tools.builtin.edit import edit_tool  # noqa: E402
from tools.context import ReadRecord, ToolOptions, ToolUseContext, content_hash  # noqa: E402
from tools.pipeline.steps import ToolCall, run_tool_call  # noqa: E402

EDITS = 300
ROUNDS = 5
SUMMARY = (
    "<summary>" + "The user asked for a parser; it is written and tested. " * 40 + "</summary>"
)


# -- 1. checkpoints ------------------------------------------------------------------------


def _edit_ctx(project: Path) -> ToolUseContext:
    perms = PermissionContext(mode=PermissionMode.BYPASS, cwd=project, bypass_available=True)
    return ToolUseContext(permissions=perms, options=ToolOptions(tools=(edit_tool,)))


def _mark_read(ctx: ToolUseContext, path: Path) -> None:
    data = path.read_bytes()
    ctx.state.read_files.record(ReadRecord(path, content_hash(data), path.stat().st_mtime_ns))


async def _pipeline_edits(project: Path, store: CheckpointStore | None) -> float:
    """Median wall time of one Edit through the pipeline (the Edit itself fsyncs its write)."""
    path = project / "module.py"
    path.write_text(_SOURCE)
    ctx = _edit_ctx(project)
    if store is not None:
        ctx.state.conversation.file_watch = store
    _mark_read(ctx, path)
    times = []
    for i in range(EDITS // 3):
        if store is not None:
            store.begin_turn(f"turn-{i}")  # every Edit is the first of its turn: a backup
        old, new = ("line 150 = 1050", "line 150 = 9999") if i % 2 == 0 else ("9999", "1050")
        call = ToolCall(
            f"e{i}", "Edit", {"file_path": str(path), "old_string": old, "new_string": new}
        )
        t = time.perf_counter_ns()
        outcome = await run_tool_call(call, ctx)
        times.append(time.perf_counter_ns() - t)
        assert not outcome.is_error, outcome.tool_result
    return statistics.median(times) / 1e6


async def _checkpoint_cost(project: Path, store: CheckpointStore, first: bool) -> float:
    """Median time of the store's work before one Edit: the first touch of a file in a turn
    (read, hash, write the blob, record the snapshot), or a file already saved in the turn."""
    path = project / "module.py"
    ctx = _edit_ctx(project)
    inp = {"file_path": str(path), "old_string": "a", "new_string": "b"}
    parsed = edit_tool.input_model.model_validate(inp)
    store.begin_turn("turn-first")
    times = []
    for i in range(EDITS):
        path.write_text(_SOURCE + f"# version {i}\n")  # new content: a new blob to write
        if first:
            store.begin_turn(f"turn-{i}")
        t = time.perf_counter_ns()
        await store.before_call(edit_tool, parsed, lambda: inp, ctx)
        times.append(time.perf_counter_ns() - t)
    return statistics.median(times) / 1e6


_SOURCE = "".join(f"line {i} = {i * 7}  # some code here\n" for i in range(300))


async def bench_checkpoints(tmp: Path) -> list[tuple[str, str, str]]:
    writer = TranscriptWriter(tmp / "t.jsonl", session_id="bench", cwd=tmp)

    def store() -> CheckpointStore:
        blob_dir = tmp / f"blobs-{time.perf_counter_ns()}"
        return CheckpointStore(
            blob_dir, lambda: [tmp], record=lambda p: writer.meta("file-history-snapshot", **p)
        )

    first = [await _checkpoint_cost(tmp, store(), True) for _ in range(ROUNDS)]
    again = [await _checkpoint_cost(tmp, store(), False) for _ in range(ROUNDS)]
    plain, watched = [], []
    for _ in range(ROUNDS):  # interleaved, so load on the machine hits both alike
        plain.append(await _pipeline_edits(tmp, None))
        watched.append(await _pipeline_edits(tmp, store()))
    writer.close()
    return [
        (
            "checkpoint before an Edit, first in its turn",
            f"{statistics.median(first):.3f} ms",
            "10 KB file; target < 2 ms",
        ),
        (
            "checkpoint before an Edit, already saved",
            f"{statistics.median(again):.3f} ms",
            "same turn",
        ),
        (
            "Edit through the pipeline, without / with",
            f"{statistics.median(plain):.1f} / {statistics.median(watched):.1f} ms",
            "the Edit fsyncs",
        ),
    ]


# -- 2. compaction -------------------------------------------------------------------------


def _conversation(tokens: int) -> list[dict[str, Any]]:
    """Messages the loop's own meter counts as ``tokens`` (what its threshold compares)."""
    messages: list[dict[str, Any]] = []
    i = 0
    while estimate_tokens(messages) < tokens:
        messages.append({"role": "user", "content": f"Request {i}: fix the failing test {i}"})
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking at it. " * 60},
                    {
                        "type": "tool_use",
                        "id": f"t{i}",
                        "name": "Bash",
                        "input": {"command": "pytest -x"},
                    },
                ],
            }
        )
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "FAILED x " * 500}
        messages.append({"role": "user", "content": [result]})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]})
        i += 1
    return messages


class _InstantModel:
    async def stream_turn(self, request: Any, *args: Any, **kw: Any) -> AssistantTurn:
        assert SUMMARY_MARKER in json.dumps(request.messages[-1])
        return AssistantTurn([{"type": "text", "text": SUMMARY}], "end_turn", Usage(10, 10))


async def _compact_once(tmp: Path, model: Any, messages: list[dict[str, Any]]) -> tuple[float, int]:
    from agent_cli.loop.agent_loop import AgentLoop, SessionLinks

    project = tmp / "proj"
    project.mkdir(exist_ok=True)
    ctx = _edit_ctx(project)
    for n in range(5):
        f = project / f"read{n}.py"
        f.write_text("x = 1\n" * 3000)
        _mark_read(ctx, f)
    writer = TranscriptWriter(tmp / f"c{time.perf_counter_ns()}.jsonl", session_id="b", cwd=project)
    loop = AgentLoop(
        model=model,
        model_name="claude-sonnet-4-5",
        ctx=ctx,
        system_prompt="You are Nerve. " * 400,
        links=SessionLinks(transcript=writer, messages=[dict(m) for m in messages]),
    )
    pre = loop.compaction.tokens(loop)
    t = time.perf_counter()
    events = [e async for e in loop.compact("")]
    elapsed = time.perf_counter() - t
    writer.close()
    assert events[-1].stage == "done", events
    return elapsed, pre


async def bench_compaction(tmp: Path) -> list[tuple[str, str, str]]:
    from agent_cli.model.client import ModelClient
    from agent_cli.model.config import ModelConfig
    from agent_cli.testing import Scenario, ScriptedServer, Turn, text

    messages = _conversation(150_000 - 1_500)  # and a 1.5k-token system prompt
    instant = [await _compact_once(tmp, _InstantModel(), messages) for _ in range(ROUNDS)]
    pre = instant[0][1]
    turns = [Turn([text(SUMMARY)]) for _ in range(ROUNDS)]
    with ScriptedServer(Scenario.of(*turns)) as server:
        client = ModelClient(ModelConfig(api_key="bench", base_url=server.base_url))
        await _compact_once(tmp, _InstantModel(), messages)  # warm-up of the loop's imports
        http = []
        for _ in range(ROUNDS):
            http.append((await _compact_once(tmp, client, messages))[0])
        await client.aclose()
    return [
        (
            f"compaction of {pre / 1000:.0f}k tokens, model answers at once",
            f"{statistics.median(t for t, _ in instant) * 1000:.0f} ms",
            "Nerve's own work",
        ),
        (
            "  same through the model client + loopback HTTP",
            f"{statistics.median(http) * 1000:.0f} ms",
            "scripted server, no model delay",
        ),
    ]


# -- 3. and 4. resume ----------------------------------------------------------------------

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

base = vm("VmHWM")
t = time.perf_counter()
reader = TranscriptReader.load(Path(sys.argv[1]))
messages = repair_for_resume(reader, None)
print(json.dumps({"total": time.perf_counter() - t, "messages": len(messages),
                  "hwm": vm("VmHWM") - base}))
"""


def _resume(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def _with_boundary(src: Path, dst: Path) -> None:
    shutil.copyfile(src, dst)
    w = TranscriptWriter(dst, session_id="bench", cwd=Path("/home/dev/project"), last_uuid="x")
    write_boundary(w, "auto", 160_000)
    w.user({"role": "user", "content": SUMMARY}, isCompactSummary=True)
    for i in range(20):
        w.user({"role": "user", "content": f"after compaction {i}"})
        w.assistant({"role": "assistant", "content": [{"type": "text", "text": "ok " * 100}]})
    w.close()


async def _first_request(path: Path, tmp: Path) -> tuple[int, float]:
    """Resume ``path`` as a session and send one prompt; the size of the request that goes."""
    from agent_cli.options import RunOptions
    from agent_cli.session.agent_session import AgentSession
    from agent_cli.testing import Scenario, ScriptedServer, Turn, text
    from agent_cli.transcripts.transcript import project_dir

    project = tmp / "resume-project"
    project.mkdir(exist_ok=True)
    os.environ["NERVE_DATA_DIR"] = str(tmp / "data")
    target = project_dir(project) / "bench.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)
    with ScriptedServer(Scenario.of(Turn([text("resumed")]))) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        os.environ["ANTHROPIC_API_KEY"] = "bench"
        t = time.perf_counter()
        session = AgentSession.create(RunOptions(resume="bench"), cwd=project)
        async for _ in session.run_turn("go on"):
            pass
        elapsed = time.perf_counter() - t
        await session.close()
        return len(json.dumps(server.requests[0].body)), elapsed


async def bench_resume(tmp: Path, mb: float) -> list[tuple[str, str, str]]:
    import importlib.util

    # bench/sessions.py builds the transcript (bench/ is not a package; its permissions.py
    # would shadow the real package on sys.path).
    spec = importlib.util.spec_from_file_location("bench_sessions", ROOT / "bench" / "sessions.py")
    assert spec is not None and spec.loader is not None
    sessions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sessions)
    build = sessions.build

    plain = tmp / "session.jsonl"
    build(plain, int(mb * 1_000_000))
    compacted = tmp / "compacted.jsonl"
    _with_boundary(plain, compacted)
    before = [_resume(plain) for _ in range(3)]
    after = [_resume(compacted) for _ in range(3)]
    size, elapsed = await _first_request(plain, tmp)

    def row(runs: list[dict[str, Any]]) -> str:
        t = statistics.median(r["total"] for r in runs)
        hwm = statistics.median(r["hwm"] for r in runs) / 1e6
        return f"{t:.2f} s, {hwm:.0f} MB"

    return [
        (
            f"resume {mb:.0f} MB, no boundary (full read)",
            row(before),
            f"{before[0]['messages']} msgs",
        ),
        (f"resume {mb:.0f} MB, boundary near the end", row(after), f"{after[0]['messages']} msgs"),
        (
            f"first request after resuming {mb:.0f} MB (no boundary)",
            f"{size / 1e6:.2f} MB",
            f"~{size // 4 // 1000}k tokens; {elapsed:.1f} s to the answer",
        ),
    ]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100.0)
    args = ap.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="nerve-bench-context-") as tmp:
        rows += await bench_checkpoints(Path(tmp))
        rows += await bench_compaction(Path(tmp))
        rows += await bench_resume(Path(tmp), args.mb)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median':>14}  note")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>14}  {note}")


if __name__ == "__main__":
    asyncio.run(main())
