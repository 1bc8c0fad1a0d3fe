"""The Agent SDK with ``include_partial_messages=True`` gets ``StreamEvent`` messages from
``nerve``: the raw API deltas of the answer, before the complete ``AssistantMessage``, in the
same session (issue 23 item 2: "partial messages when asked")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)
__all__ = ["harness"]


def _text_deltas(events: list[Any]) -> str:
    return "".join(
        e.event["delta"]["text"]
        for e in events
        if e.event.get("type") == "content_block_delta" and e.event["delta"]["type"] == "text_delta"
    )


async def test_partial_messages_reach_the_sdk_before_the_answer(harness: Harness) -> None:
    answer = "Partial pieces arrive first, then the whole answer."
    server = harness.server(Scenario.of(Turn([text(answer)])))
    opts = sdk.ClaudeAgentOptions(
        cli_path=NERVE,
        cwd=str(harness.project),
        env=harness.env_for(server),
        include_partial_messages=True,
    )
    try:
        got = [m async for m in sdk.query(prompt="stream it", options=opts)]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    kinds = [type(m).__name__ for m in got]
    events = [m for m in got if isinstance(m, sdk.StreamEvent)]
    assert events, kinds
    first_assistant = kinds.index("AssistantMessage")
    delta_at = [
        i
        for i, m in enumerate(got)
        if isinstance(m, sdk.StreamEvent) and m.event.get("type") == "content_block_delta"
    ]
    assert delta_at and max(delta_at) < first_assistant, kinds  # the pieces come first
    assert _text_deltas(events) == answer
    init = got[0]
    assert isinstance(init, sdk.SystemMessage) and init.subtype == "init"
    assert {e.session_id for e in events} == {init.data["session_id"]}
    assert len({e.uuid for e in events}) == len(events)  # each event its own uuid
    assert all(e.parent_tool_use_id is None for e in events)
    result = got[-1]
    assert isinstance(result, sdk.ResultMessage) and result.result == answer
