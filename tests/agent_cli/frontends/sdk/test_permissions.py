"""``can_use_tool`` with the real Agent SDK: an ask goes to the callback (allow with a changed
input, deny with a message); a deny rule is applied first and never asks."""

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


async def test_can_use_tool_allows_with_updated_input_and_denies_with_a_message(
    harness: Harness,
) -> None:
    target = harness.project / "a.txt"
    scenario = Scenario.of(
        Turn([tool_use("Write", {"file_path": str(target), "content": "model"}, id="w1")]),
        Turn(
            [tool_use("Bash", {"command": "touch b.txt"}, id="b1")],
            match=Match(tool_result_for="w1"),
        ),
        Turn(
            [tool_use("Bash", {"command": "rm -rf junk"}, id="r1")],
            match=Match(tool_result_for="b1"),
        ),
        Turn([text("All done.")], match=Match(tool_result_for="r1")),
    )
    server = harness.server(scenario)
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, tool_input))
        if name == "Write":
            return sdk.PermissionResultAllow(updated_input={**tool_input, "content": "sdk"})
        return sdk.PermissionResultDeny(message="no bash today")

    opts = sdk.ClaudeAgentOptions(
        cli_path=NERVE,
        cwd=str(harness.project),
        env=harness.env_for(server),
        can_use_tool=can_use_tool,
        disallowed_tools=["Bash(rm *)"],
    )
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            await client.query("write, touch, remove")
            got = [m async for m in client.receive_response()]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert [name for name, _ in asked] == ["Write", "Bash"]  # rm: the deny rule, no ask
    assert asked[1][1] == {"command": "touch b.txt"}
    assert target.read_text() == "sdk"
    assert not (harness.project / "b.txt").exists()
    results = {b.tool_use_id: b for m in got if isinstance(m, sdk.UserMessage) for b in m.content}
    assert "no bash today" in json.dumps(results["b1"].content) and results["b1"].is_error
    assert "Bash(rm *)" in json.dumps(results["r1"].content)
    result = got[-1]
    assert isinstance(result, sdk.ResultMessage) and result.result == "All done."
    assert {d["tool_use_id"] for d in result.permission_denials or []} == {"b1", "r1"}
