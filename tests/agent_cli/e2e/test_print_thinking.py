"""Extended thinking: ``MAX_THINKING_TOKENS`` turns it on; thinking and redacted_thinking blocks
go back unchanged (signatures intact) across tool turns, which the scripted server checks."""

from __future__ import annotations

from agent_cli.testing import Match, Scenario, Turn, redacted_thinking, text, thinking, tool_use
from agent_cli.testing.checks import check_thinking
from tests.agent_cli.e2e.conftest import Harness


def _scenario() -> Scenario:
    return Scenario.of(
        Turn(
            [
                thinking("The user wants the date; run it.", signature="sig-abc=="),
                redacted_thinking("EuYBCkQYAiJA-opaque"),
                tool_use("Bash", {"command": "echo 2026-12-04"}, id="t1"),
            ]
        ),
        Turn([text("It is 2026-12-04.")], match=Match(tool_result_for="t1")),
    )


def test_thinking_is_sent_and_its_blocks_come_back_intact(harness: Harness) -> None:
    harness.env["MAX_THINKING_TOKENS"] = "2048"
    run = harness.run(
        ["-p", "what day is it?", "--permission-mode", "bypassPermissions"], _scenario()
    )
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "It is 2026-12-04."
    first, second = (r.body for r in run.server.requests)
    for body in (first, second):
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert body["max_tokens"] > 2048
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:2] == [
        {
            "type": "thinking",
            "thinking": "The user wants the date; run it.",
            "signature": "sig-abc==",
        },
        {"type": "redacted_thinking", "data": "EuYBCkQYAiJA-opaque"},
    ]


def test_no_thinking_unless_asked(harness: Harness) -> None:
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("hello")])))
    assert run.rc == 0, run.stderr
    assert "thinking" not in run.server.requests[0].body


def test_the_scripted_server_refuses_altered_or_dropped_thinking() -> None:
    sent = {
        "t1": [
            {"type": "thinking", "thinking": "plan", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
        ]
    }
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}
    intact = {"role": "assistant", "content": [*sent["t1"], call]}
    assert check_thinking({"messages": [{"role": "user", "content": "x"}, intact]}, sent) == []
    altered = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan!", "signature": "sig"},
            sent["t1"][1],
            call,
        ],
    }
    problems = check_thinking({"messages": [altered]}, sent)
    assert any("altered" in p for p in problems) and any("unchanged" in p for p in problems)
    dropped = {"role": "assistant", "content": [call]}
    assert any("thinking block(s)" in p for p in check_thinking({"messages": [dropped]}, sent))
