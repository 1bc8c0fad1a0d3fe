"""``can_use_tool`` for a command that hides characters (issue 32, item 5), with the real Agent
SDK: no ``permission_suggestions``, the title written out (``\\x1b``, ``\\r``), and an allow's
``updatedPermissions`` not applied; the same update for an ordinary command is applied."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.frontends.sdk.permission_updates import parse_updates
from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

from claude_agent_sdk.types import PermissionRuleValue  # noqa: E402

__all__ = ["harness"]

HIDDEN = "touch pwned #\x1b[2K\rgit status"  # printed, only "git status" is left on screen


async def test_a_hidden_command_gets_no_suggestions_and_saves_no_rule(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": HIDDEN}, id="h1")]),
        Turn(
            [tool_use("Bash", {"command": "touch b.txt"}, id="b1")],
            match=Match(tool_result_for="h1"),
        ),
        Turn(
            [tool_use("Bash", {"command": "touch c.txt"}, id="c1")],
            match=Match(tool_result_for="b1"),
        ),
        Turn([text("All done.")], match=Match(tool_result_for="c1")),
    )
    server = harness.server(scenario)
    asked: list[tuple[str, Any]] = []
    remember = sdk.PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue(tool_name="Bash", rule_content="touch *")],
        behavior="allow",
        destination="session",
    )

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((tool_input["command"], context))
        return sdk.PermissionResultAllow(updated_permissions=[remember])

    opts = sdk.ClaudeAgentOptions(
        cli_path=NERVE,
        cwd=str(harness.project),
        env=harness.env_for(server),
        can_use_tool=can_use_tool,
    )
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            await client.query("touch three files")
            got = [m async for m in client.receive_response()]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    # h1's "always allow touch" was not applied: b1 asked; b1's was: c1 did not.
    assert [command for command, _ in asked] == [HIDDEN, "touch b.txt"]
    hidden, plain = asked[0][1], asked[1][1]
    assert hidden.suggestions == [] and plain.suggestions
    assert "\x1b" not in (hidden.title or "") and "\r" not in (hidden.title or "")
    assert "\\x1b[2K" in (hidden.title or "")
    assert "\x1b" not in (hidden.decision_reason or "")
    assert (harness.project / "c.txt").exists()
    result = got[-1]
    assert isinstance(result, sdk.ResultMessage) and result.result == "All done."


def test_a_rule_holding_hidden_characters_voids_the_update_list() -> None:
    for content in ("git status\x1b[2K", "git status\u202e", "git\u200b *"):
        bad = {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": content}],
            "behavior": "allow",
        }
        updates, why = parse_updates([bad])
        assert updates == [] and why is not None and "control or invisible" in why, content
        assert "\x1b" not in why and "\u202e" not in why  # the reason is printed to stderr
