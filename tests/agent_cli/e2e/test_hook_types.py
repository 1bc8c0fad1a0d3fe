"""Hook types Nerve cannot run, through a real ``nerve -p`` (issue 12 item 3): an ``mcp_tool``
guard is reported at start and denies the calls it guards instead of being skipped."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness


def test_an_mcp_tool_guard_nerve_cannot_run_denies_the_call(harness: Harness) -> None:
    settings = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    guard = {"type": "mcp_tool", "server": "policy", "tool": "check"}
    settings.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]}})
    )
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch CANARY"}, id="t_bash")]),
        Turn([text("done")], match=Match(tool_result_for="t_bash")),
    )
    run = harness.run(["-p", "go", "--permission-mode", "bypassPermissions"], scenario)
    assert run.rc == 0, run.stderr
    assert not (harness.project / "CANARY").exists()
    last = run.server.requests[1].body["messages"][-1]
    result = next(b for b in last["content"] if b.get("tool_use_id") == "t_bash")
    assert result.get("is_error") and "'mcp_tool' cannot run in Nerve yet" in json.dumps(result)
    assert "hook type 'mcp_tool' cannot run in Nerve yet" in run.stderr
