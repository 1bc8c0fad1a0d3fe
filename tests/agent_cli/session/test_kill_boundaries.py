"""``nerve -p`` SIGKILLed at every event boundary of a streamed message with two tool calls.

Whatever the moment, the transcript left behind rebuilds into a valid request, and every call
that may have run is in it with a result: the real one if it was recorded, else "interrupted".
A call whose ``content_block_stop`` the client has read is on disk before the message ends.
The processes are real ``nerve`` processes forked from a warm one (``forker.py``), so the 16
kills cost about as much as two cold starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.loop.messages import normalize_messages_for_api
from agent_cli.session.resume import RESUME_INTERRUPTED, repair_for_resume
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from agent_cli.testing.checks import check_request
from agent_cli.testing.events import turn_events
from agent_cli.transcripts.transcript import TranscriptReader
from tests.agent_cli.e2e.conftest import Harness
from tests.agent_cli.session.conftest import records, wait_for

FORKER = Path(__file__).with_name("forker.py")
REPO = Path(__file__).resolve().parents[3]
CALLS = {"t_a": "echo A >> ran.txt", "t_b": "echo B >> ran.txt"}
BYPASS = ["--permission-mode", "bypassPermissions"]


def _turn(**kw: Any) -> Turn:
    blocks = [text("Two calls.")] + [
        tool_use("Bash", {"command": c}, id=i) for i, c in CALLS.items()
    ]
    return Turn(blocks, **kw)


# Whole tool inputs in two deltas each: fewer boundaries of the same kinds.
TEXT_CHUNK, JSON_CHUNK = 6, 1000
EVENTS = turn_events(_turn(), "msg", "model", TEXT_CHUNK, JSON_CHUNK)
# The event after which each call has been handed out (its block's content_block_stop).
STOPS = {
    block_id: next(
        n
        for n, (name, data) in enumerate(EVENTS)
        if name == "content_block_stop" and data["index"] == index
    )
    for index, block_id in ((1, "t_a"), (2, "t_b"))
}


class Forker:
    """The warm ``nerve`` (see ``forker.py``)."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [sys.executable, str(FORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def spawn(self, harness: Harness, argv: list[str], server: ScriptedServer) -> int:
        out = harness.root / "out.txt"
        req = {
            "argv": argv,
            "cwd": str(harness.project),
            "env": harness.env_for(server),
            "out": str(out),
            "err": str(harness.root / "err.txt"),
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def forker() -> Iterator[Forker]:
    f = Forker()
    yield f
    f.close()


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _harness(root: Path, base: Harness) -> Harness:
    (root / "project").mkdir(parents=True)
    env = {**base.env, "NERVE_DATA_DIR": str(root / "data")}
    return Harness(root, root / "project", env)


def _transcript(h: Harness) -> Path:
    [path] = list((h.root / "data" / "projects").glob("*/*.jsonl"))
    return path


def _streamed_calls(h: Harness) -> set[str]:
    try:
        recs = records(_transcript(h))
    except ValueError:
        return set()
    return {
        b["id"]
        for r in recs
        if r["type"] == "assistant" and r.get("streaming")
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    }


def _kill_at(forker: Forker, h: Harness, k: int) -> None:
    """Run ``nerve -p`` until the server holds after event ``k``, then SIGKILL it."""
    scenario = Scenario.of(_turn(event_holds={k: "never"}))
    server = ScriptedServer(
        scenario, gate_timeout=30, text_chunk=TEXT_CHUNK, json_chunk=JSON_CHUNK
    ).start()
    try:
        pid = forker.spawn(h, ["-p", "first prompt", *BYPASS], server)
        name, data = EVENTS[k]
        label = f"#1 {name}" + (f"[{data['index']}]" if "index" in data else "")
        wait_for(lambda: label in server.marks, what=f"event {k} ({label}) to be sent")
        for block_id, stop in STOPS.items():
            if k >= stop:  # handed out: recorded before the stream goes on
                wait_for(
                    lambda b=block_id: b in _streamed_calls(h), what=f"{block_id} in the transcript"
                )
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: _gone(pid), what="the killed nerve to end")
    finally:
        server.stop()


def _rebuilt(h: Harness) -> list[dict[str, Any]]:
    reader = TranscriptReader.load(_transcript(h))
    messages = repair_for_resume(reader, None)
    return normalize_messages_for_api([*messages, {"role": "user", "content": "go on"}])


def _results(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        b["tool_use_id"]: b
        for m in messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }


@pytest.mark.parametrize("k", range(len(EVENTS)), ids=[f"{n}-{e[0]}" for n, e in enumerate(EVENTS)])
def test_kill_at_every_event_boundary(
    forker: Forker, harness: Harness, tmp_path: Path, k: int
) -> None:
    h = _harness(tmp_path / "run", harness)
    _kill_at(forker, h, k)
    messages = _rebuilt(h)
    assert check_request({"model": "m", "max_tokens": 1, "messages": messages}) == []
    calls = [
        b["id"]
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    ran_file = h.project / "ran.txt"
    ran = ran_file.read_text().split() if ran_file.exists() else []
    assert len(ran) == len(set(ran))  # nothing ran twice
    handed_out = [i for i, stop in STOPS.items() if k >= stop]
    assert calls == handed_out
    results = _results(messages)
    for block_id in calls:
        content = str(results[block_id]["content"])
        assert content == RESUME_INTERRUPTED or results[block_id].get("is_error") is not True
    # A call that ran is never forgotten.
    for block_id, command in CALLS.items():
        if command.split()[1] in ran:
            assert block_id in calls


@pytest.mark.parametrize("call", ["t_a", "t_b"])
def test_continue_after_a_kill_mid_stream_tells_the_model_the_call_ran(
    forker: Forker, harness: Harness, tmp_path: Path, call: str
) -> None:
    h = _harness(tmp_path / "run", harness)
    _kill_at(forker, h, STOPS[call] + 1)  # the call started; the message never ended
    server = ScriptedServer(
        Scenario.of(Turn([text("Picking up.")], match=Match(contains_text="go on")))
    ).start()
    try:
        pid = forker.spawn(h, ["-p", "go on", "--continue", "--output-format", "json"], server)
        wait_for(lambda: _gone(pid), what="the resumed nerve to finish")
    finally:
        server.stop()
    server.assert_done()
    out = (h.root / "out.txt").read_text()
    assert json.loads(out.splitlines()[-1])["result"] == "Picking up.", out
    [request] = server.requests
    messages = request.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["id"] for b in messages[1]["content"] if b["type"] == "tool_use"] == list(CALLS)[
        : list(CALLS).index(call) + 1
    ]
    results = _results(messages)
    assert set(results) == set(list(CALLS)[: list(CALLS).index(call) + 1])
    for result in results.values():
        # Each call that was handed out either finished (its output is recorded) or is
        # answered as interrupted: it may have run.
        assert result.get("is_error") is not True or result["content"] == RESUME_INTERRUPTED
    assert messages[2]["content"][-1] == {"type": "text", "text": "go on"}
