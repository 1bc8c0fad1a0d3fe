"""Folding records into messages: streamed calls, Claude Code's per-block records, repeated lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.session.resume import RESUME_INTERRUPTED, repair_for_resume
from agent_cli.testing.checks import check_request
from agent_cli.transcripts.fold import MessageFolder
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter


def _call(tid: str, cmd: str = "ls") -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _result(tid: str, text: str = "ok") -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}],
    }


def _asst(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), **extra}


def test_streaming_records_then_the_complete_message_fold_into_one(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    w.user({"role": "user", "content": "go"})
    w.assistant(_asst(_text("First "), _call("a")), streamId="s1", streaming=True)
    w.user(_result("a", "a done"))
    w.assistant(_asst(_text("then "), _call("b")), streamId="s1", streaming=True)
    final = _asst(_text("First then"), _call("a"), _call("b"), _text("after"), id="msg_1")
    w.assistant(final, streamId="s1")
    w.user(_result("b", "b done"))
    w.close()
    messages = repair_for_resume(TranscriptReader.load(w.path), None)
    assert messages[1] == {"role": "assistant", "content": final["content"]}
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["a", "b"]


def test_a_stream_cut_before_its_message_ended_keeps_every_call(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    w.user({"role": "user", "content": "go"})
    w.assistant(_asst(_text("Two calls."), _call("a")), streamId="s1", streaming=True)
    w.user(_result("a", "a done"))
    w.assistant(_asst(_call("b")), streamId="s1", streaming=True)
    w.close()  # killed here: no complete message, no result for b
    messages = repair_for_resume(TranscriptReader.load(w.path), None)
    assert messages[1]["content"] == [_text("Two calls."), _call("a"), _call("b")]
    results = {b["tool_use_id"]: b for b in messages[2]["content"]}
    assert results["a"]["content"] == "a done"
    assert results["b"]["content"] == RESUME_INTERRUPTED and results["b"]["is_error"] is True
    assert check_request({"model": "m", "max_tokens": 1, "messages": messages}) == []


def test_a_complete_message_that_lost_a_call_still_names_it() -> None:
    folder = MessageFolder()
    rec = {"streamId": "s", "streaming": True, "message": _asst(_call("a"))}
    folder.add("assistant", rec)
    folder.add("assistant", {"streamId": "s", "message": _asst(_text("hi"))})
    assert folder.messages == [_asst(_text("hi"), _call("a"))]


def test_claude_code_per_block_records_fold_by_message_id() -> None:
    folder = MessageFolder()
    folder.add("user", {"uuid": "u0", "message": {"role": "user", "content": "go"}})
    folder.add("assistant", {"uuid": "u1", "message": _asst(_text("Looking."), id="m1")})
    folder.add("assistant", {"uuid": "u2", "message": _asst(_call("a"), id="m1")})
    folder.add("user", {"uuid": "u3", "message": _result("a")})
    folder.add("assistant", {"uuid": "u4", "message": _asst(_call("b"), id="m1")})
    folder.add("assistant", {"uuid": "u5", "message": _asst(_call("b"), id="m1")})  # repeated
    assert [m["role"] for m in folder.messages] == ["user", "assistant", "user"]
    assert folder.messages[1]["content"] == [_text("Looking."), _call("a"), _call("b")]
    # After a new prompt the same id is a new message (ids reused across runs by a proxy).
    folder.add("user", {"uuid": "u6", "message": {"role": "user", "content": "more"}})
    folder.add("assistant", {"uuid": "u7", "message": _asst(_text("again"), id="m1")})
    assert folder.messages[-1] == {"role": "assistant", "content": [_text("again")]}


def test_a_line_written_twice_is_read_once(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    w.user({"role": "user", "content": "go"})
    w.assistant(_asst(_call("a")))
    w.user(_result("a"))
    w.close()
    lines = w.path.read_bytes().splitlines(keepends=True)
    w.path.write_bytes(b"".join([lines[0], lines[1], lines[1], lines[2], lines[2]]))
    reader = TranscriptReader.load(w.path)
    assert [m["role"] for m in reader.messages] == ["user", "assistant", "user"]
    assert len(reader.records) == 3
    assert any("skipped 2 repeated record(s)" in x for x in reader.warnings)
    assert json.loads(lines[2])["uuid"] == reader.last_uuid
