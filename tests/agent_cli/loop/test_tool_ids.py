"""Unique tool_use ids at the API boundary (``normalize_messages_for_api``)."""

from __future__ import annotations

from typing import Any

from agent_cli.loop.messages import normalize_messages_for_api
from agent_cli.testing.checks import check_request


def _call(tid: str, cmd: str = "ls") -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}


def _res(tid: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": text}


def _ok(messages: list[dict[str, Any]]) -> None:
    assert check_request({"model": "m", "max_tokens": 1, "messages": messages}) == []


def test_an_id_reused_in_a_later_message_gets_a_new_one_with_its_result() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_call("t1", "ls")]},
        {"role": "user", "content": [_res("t1", "first")]},
        {"role": "assistant", "content": [_call("t1", "pwd")]},
        {"role": "user", "content": [_res("t1", "second")]},
    ]
    out = normalize_messages_for_api(messages)
    _ok(out)
    assert out[1]["content"][0]["id"] == "t1" and out[2]["content"][0]["content"] == "first"
    assert out[3]["content"][0] == _call("t1_r2", "pwd")
    assert out[4]["content"][0] == _res("t1_r2", "second")
    assert normalize_messages_for_api(messages) == out  # the same every time: cache stays warm
    assert messages[3]["content"][0]["id"] == "t1"  # the conversation itself is untouched


def test_repeats_in_one_message_and_repeated_results() -> None:
    messages = [
        {"role": "user", "content": "go"},
        # the same call twice (a line read twice), then a different call reusing the id
        {"role": "assistant", "content": [_call("t1"), _call("t1"), _call("t1", "pwd")]},
        {"role": "user", "content": [_res("t1", "a"), _res("t1", "a"), _res("t1", "b")]},
    ]
    out = normalize_messages_for_api(messages)
    _ok(out)
    assert out[1]["content"] == [_call("t1"), _call("t1_r2", "pwd")]
    assert out[2]["content"] == [_res("t1", "a"), _res("t1_r2", "a")]


def test_a_new_id_never_collides_with_an_existing_one() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_call("t1"), _call("t1_r2")]},
        {"role": "user", "content": [_res("t1"), _res("t1_r2")]},
        {"role": "assistant", "content": [_call("t1", "pwd")]},
        {"role": "user", "content": [_res("t1", "x")]},
    ]
    out = normalize_messages_for_api(messages)
    _ok(out)
    assert out[3]["content"][0]["id"] == "t1_r3"
