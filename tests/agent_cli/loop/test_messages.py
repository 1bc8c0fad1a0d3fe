"""normalize_messages_for_api: the one boundary that makes a conversation a valid request."""

from __future__ import annotations

from agent_cli.loop.messages import (
    INTERRUPTED_RESULT,
    answer_dangling_tool_uses,
    normalize_messages_for_api,
    system_reminder,
    text_of,
)


def tu(i: str) -> dict:
    return {"type": "tool_use", "id": i, "name": "Read", "input": {"file_path": "/x"}}


def tr(i: str, text: str = "ok") -> dict:
    return {"type": "tool_result", "tool_use_id": i, "content": text}


def test_strips_ui_only_private_keys_and_empty_messages() -> None:
    msgs = [
        {"role": "user", "content": "hi", "_meta": 1},
        {"role": "user", "content": "ui note", "_ui_only": True},
        {"role": "assistant", "content": [{"type": "text", "text": "  "}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hello", "_x": 1}]},
        {"role": "system", "content": "local command output"},
    ]
    out = normalize_messages_for_api(msgs)
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
    ]


def test_tool_results_first_and_merged_with_following_user_text() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a"), tu("b")]},
        {"role": "user", "content": [tr("b")]},
        system_reminder("hook said hi"),
        {"role": "user", "content": [tr("a")]},
    ]
    out = normalize_messages_for_api(msgs)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    kinds = [b["type"] for b in out[2]["content"]]
    assert kinds == ["tool_result", "tool_result", "text"]
    assert {b["tool_use_id"] for b in out[2]["content"][:2]} == {"a", "b"}
    assert "_ephemeral" not in out[2]


def test_dangling_tool_use_gets_interrupted_result() -> None:
    msgs = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [tu("a")]}]
    out = normalize_messages_for_api(msgs)
    assert out[-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "a",
                "content": INTERRUPTED_RESULT,
                "is_error": True,
            }
        ],
    }


def test_partially_answered_tool_uses_are_completed_in_the_same_message() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a"), tu("b")]},
        {"role": "user", "content": [tr("a"), {"type": "text", "text": "next"}]},
    ]
    out = answer_dangling_tool_uses(normalize_messages_for_api(msgs))
    ids = [b.get("tool_use_id") for b in out[2]["content"] if b["type"] == "tool_result"]
    assert sorted(ids) == ["a", "b"]
    assert len(out) == 3


def test_orphan_tool_result_dropped_and_leading_assistant_removed() -> None:
    msgs = [
        {"role": "assistant", "content": "stray"},
        {"role": "user", "content": [tr("zzz"), {"type": "text", "text": "q"}]},
    ]
    out = normalize_messages_for_api(msgs)
    assert out == [{"role": "user", "content": [{"type": "text", "text": "q"}]}]


def test_consecutive_assistant_messages_merged() -> None:
    msgs = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a1"},
        {"role": "assistant", "content": [tu("t")]},
        {"role": "user", "content": [tr("t")]},
    ]
    out = normalize_messages_for_api(msgs)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert text_of(out[1]) == "a1"
    assert out[1]["content"][1]["id"] == "t"
