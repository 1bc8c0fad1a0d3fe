"""``nerve -p`` with a project ``.mcp.json``: ToolSearch loads the MCP tool, the call answers."""

from __future__ import annotations

import json
import subprocess
import sys

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness, harness  # noqa: F401 (the fixture)
from tests.tools.mcp.conftest import SERVERS, live_pids_with


def _results(body: dict) -> dict[str, dict]:
    last = body["messages"][-1]
    return {b["tool_use_id"]: b for b in last["content"] if b.get("type") == "tool_result"}


def _tools(body: dict) -> dict[str, dict]:
    return {t["name"]: t for t in body["tools"]}


def test_print_mode_calls_a_project_mcp_tool_after_toolsearch(harness: Harness) -> None:  # noqa: F811
    token = f"e2e-{harness.root.name}"
    (harness.project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "demo": {
                        "command": sys.executable,
                        "args": [str(SERVERS / "demo_server.py"), token],
                    },
                    "unapproved": {"command": "/bin/false"},
                }
            }
        )
    )
    # The approval is the user's own (an untracked local settings file in a git repository),
    # not the repository's: see the folder-trust rules in config/trust.py.
    subprocess.run(["git", "init", "-q"], cwd=harness.project, check=True)
    settings = harness.project / ".nerve" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enabledMcpjsonServers": ["demo"]}))
    scenario = Scenario.of(
        Turn([tool_use("ToolSearch", {"query": "select:mcp__demo__add"}, id="t_search")]),
        Turn(
            [tool_use("mcp__demo__add", {"a": 20, "b": 22}, id="t_add")],
            match=Match(tool_result_for="t_search"),
        ),
        Turn([text("The sum is 42.")], match=Match(tool_result_for="t_add")),
    )
    run = harness.run(
        ["-p", "add 20 and 22", "--allowedTools", "mcp__demo__add"],
        scenario,
    )
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "The sum is 42."
    # Text mode reports notices on stderr: the project server nobody approved did not start.
    assert "Project MCP servers not started (not approved): unapproved" in run.stderr
    first, second, third = (r.body for r in run.server.requests)
    # Deferred at first (by name only, after every built-in), loaded in full after ToolSearch.
    names = [t["name"] for t in first["tools"]]
    assert names.index("mcp__demo__add") > names.index("ToolSearch")
    assert _tools(first)["mcp__demo__add"].get("defer_loading") is True
    assert "mcp__demo__add" in json.dumps(_results(second)["t_search"]["content"])
    assert _tools(second)["mcp__demo__add"]["input_schema"]["required"] == ["a", "b"]
    assert "defer_loading" not in _tools(second)["mcp__demo__add"]
    add_result = _results(third)["t_add"]
    assert add_result["content"] in ("42", [{"type": "text", "text": "42"}])
    assert not add_result.get("is_error")
    assert live_pids_with(token) == []  # the server ended with the session
