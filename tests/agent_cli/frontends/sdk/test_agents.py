"""The Python Agent SDK's ``agents`` option (sent in ``initialize``, folded into ``--agents``):
the agent is offered to the model and runs with its own prompt and tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

__all__ = ["harness"]


async def test_an_sdk_agent_is_listed_and_runs_with_its_prompt_and_tools(
    harness: Harness,
) -> None:
    call = {"description": "review", "prompt": "look at a.py", "subagent_type": "reviewer"}
    in_sub = Match(
        predicate=lambda body: "REVIEWPROMPT" in json.dumps(body.get("system")),
        description="the reviewer's request",
    )
    server = harness.server(
        Scenario.of(
            Turn([tool_use("Agent", call, id="t1")]),
            Turn([text("looks fine")], match=in_sub),
            Turn([text("Reviewed.")], match=Match(tool_result_for="t1")),
        )
    )
    reviewer = sdk.AgentDefinition(
        description="Reviews code", prompt="REVIEWPROMPT", tools=["Read"]
    )
    opts = sdk.ClaudeAgentOptions(
        cli_path=NERVE,
        cwd=str(harness.project),
        env=harness.env_for(server),
        agents={"reviewer": reviewer},
        allowed_tools=["Agent"],
    )
    try:
        got: list[Any] = [m async for m in sdk.query(prompt="review a.py", options=opts)]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    init = got[0]
    assert isinstance(init, sdk.SystemMessage) and "reviewer" in init.data["agents"]
    main, sub, _ = (r.body for r in server.requests)
    assert "- reviewer: Reviews code" in json.dumps(main["system"])
    assert [t["name"] for t in sub["tools"]] == ["Read"]
    assert got[-1].result == "Reviewed."
