"""``--output-format stream-json`` speaks Claude Code's schema: every frame has the keys the
Agent SDK reads (the fixture says where that comes from), and the SDK's own parser takes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, server_error, text, thinking, tool_use
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "stream_json_frames.json").read_text())


def _kind(frame: dict[str, Any]) -> str:
    return f"system/{frame['subtype']}" if frame["type"] == "system" else frame["type"]


def missing_fields(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` lacks a key of ``expected`` or has a value of another type."""
    if expected is None:
        return [] if actual is None else [f"{path}: expected null, got {actual!r}"]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{path}.{key}: missing")
            else:
                out += missing_fields(value, actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected a list, got {actual!r}"]
        if expected and actual:
            return missing_fields(expected[0], actual[0], f"{path}[0]")
        return []
    if isinstance(expected, bool):
        return [] if isinstance(actual, bool) else [f"{path}: expected a bool, got {actual!r}"]
    if isinstance(expected, (int, float)):
        ok = isinstance(actual, (int, float)) and not isinstance(actual, bool)
        return [] if ok else [f"{path}: expected a number, got {actual!r}"]
    return [] if isinstance(actual, type(expected)) else [f"{path}: expected str, got {actual!r}"]


def test_the_checker_catches_a_renamed_or_missing_field() -> None:
    good = json.loads(json.dumps(FIXTURE["result"]))
    assert missing_fields(FIXTURE["result"], good) == []
    good["durationMs"] = good.pop("duration_ms")
    assert missing_fields(FIXTURE["result"], good) == [".duration_ms: missing"]
    frame = json.loads(json.dumps(FIXTURE["assistant"]))
    frame["parent_tool_use_id"] = "x"
    del frame["message"]["model"]
    assert len(missing_fields(FIXTURE["assistant"], frame)) == 2


def _run(harness: Harness) -> tuple[Any, list[dict[str, Any]]]:
    notes = harness.project / "notes.txt"
    notes.write_text("alpha\n")
    scenario = Scenario.of(
        Turn(
            [text("Reading."), tool_use("Read", {"file_path": str(notes)}, id="t_read")],
            faults=[server_error(times=1)],
        ),
        Turn([text("It says alpha.")], match=Match(tool_result_for="t_read")),
    )
    run = harness.run(["-p", "read notes", "--output-format", "stream-json", "--verbose"], scenario)
    assert run.rc == 0, run.stderr
    return run, [json.loads(line) for line in run.stdout.splitlines()]


def test_a_tool_turn_in_claude_codes_frames(harness: Harness) -> None:
    run, frames = _run(harness)
    kinds = [_kind(f) for f in frames]
    assert kinds == ["system/init", "system/api_retry", "assistant", "user", "assistant", "result"]
    for frame in frames:
        assert missing_fields(FIXTURE[_kind(frame)], frame) == [], frame
    init, retry, ask, tool, answer, result = frames
    session = result["session_id"]
    assert all(f["session_id"] == session for f in frames)
    assert len({f["uuid"] for f in frames}) == len(frames)
    assert "Read" in init["tools"] and init["cwd"] == str(harness.project)
    assert init["permissionMode"] == "default" and init["apiKeySource"] == "ANTHROPIC_API_KEY"
    assert retry["attempt"] == 1 and "500" in retry["error"]
    assert ask["message"]["content"] == [
        {"type": "text", "text": "Reading."},
        {
            "type": "tool_use",
            "id": "t_read",
            "name": "Read",
            "input": {"file_path": str(harness.project / "notes.txt")},
        },
    ]
    assert ask["message"]["stop_reason"] == "tool_use" and ask["message"]["model"]
    block = tool["message"]["content"][0]
    assert block["tool_use_id"] == "t_read" and "alpha" in json.dumps(block["content"])
    assert answer["message"]["content"] == [{"type": "text", "text": "It says alpha."}]
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "It says alpha." and result["num_turns"] == 2
    assert 0 < result["duration_api_ms"] <= result["duration_ms"]
    # what the server was sent is what the frames say
    assert run.server.requests[-1].body["messages"][1]["content"] == ask["message"]["content"]


def test_the_agent_sdks_parser_reads_every_frame(harness: Harness) -> None:
    parser = pytest.importorskip(
        "claude_agent_sdk._internal.message_parser",
        reason="claude-agent-sdk is not installed (pip install -e '.[test]' brings it)",
    )
    sdk = pytest.importorskip("claude_agent_sdk")
    _, frames = _run(harness)
    parsed = [parser.parse_message(f) for f in frames]
    assert [type(p).__name__ for p in parsed] == [
        "SystemMessage",
        "SystemMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    ask, tool, result = parsed[2], parsed[3], parsed[5]
    assert isinstance(ask.content[1], sdk.ToolUseBlock) and ask.content[1].name == "Read"
    assert isinstance(tool.content[0], sdk.ToolResultBlock)
    assert result.num_turns == 2 and result.result == "It says alpha."
    assert result.total_cost_usd is not None and result.usage is not None


def test_json_output_is_the_same_result_object(harness: Harness) -> None:
    run = harness.run(["-p", "hi", "--output-format", "json"], Scenario.of(Turn([text("hello")])))
    assert run.rc == 0, run.stderr
    assert missing_fields(FIXTURE["result"], run.json()) == []


def test_partial_messages_stream_every_raw_event_before_the_message(harness: Harness) -> None:
    """Each API event is a ``stream_event`` frame as it arrives: thinking, signature, text and
    tool input deltas, block starts and stops, message_delta and message_stop, then the
    ``assistant`` frame they build; the tool's ``user`` frame; the next message likewise."""
    words = "one two three four five six seven eight"
    first = Turn([thinking("Let me look."), text(words), tool_use("Glob", {"pattern": "*"}, "g1")])
    run = harness.run(
        ["-p", "count", "--output-format", "stream-json", "--include-partial-messages"],
        Scenario.of(first, Turn([text("done")])),
    )
    assert run.rc == 0, run.stderr
    frames = [json.loads(line) for line in run.stdout.splitlines()]
    kinds = [f["type"] for f in frames]
    assert kinds[0] == "system" and kinds[-1] == "result"
    events = [f for f in frames if f["type"] == "stream_event"]
    assert all(f["session_id"] == frames[0]["session_id"] for f in events)
    assert all(f["parent_tool_use_id"] is None and f["uuid"] for f in events)
    assert len({f["uuid"] for f in frames}) == len(frames)
    # the first message: its events, then its assistant frame, then the tool result
    a1 = kinds.index("assistant")
    assert kinds[a1 + 1] == "user" and "stream_event" not in kinds[a1 + 1 : a1 + 2]
    one = [f["event"] for f in frames[:a1] if f["type"] == "stream_event"]
    types = [e["type"] for e in one]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    starts = [e["content_block"]["type"] for e in one if e["type"] == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    assert types.count("content_block_stop") == 3
    deltas = {e["delta"]["type"] for e in one if e["type"] == "content_block_delta"}
    assert {"thinking_delta", "signature_delta", "text_delta", "input_json_delta"} <= deltas
    said = "".join(
        e["delta"]["text"]
        for e in one
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )
    assert said == words
    assert one[-2]["delta"]["stop_reason"] == "tool_use"
    # the second message after the tool result, then its assistant frame
    a2 = kinds.index("assistant", a1 + 1)
    two = [f["event"]["type"] for f in frames[a1 + 2 : a2] if f["type"] == "stream_event"]
    assert two[0] == "message_start" and two[-1] == "message_stop"
    assert kinds[a2 + 1 :] == ["result"]
