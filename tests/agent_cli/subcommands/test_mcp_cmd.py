"""``nerve mcp add|add-json|list|get|remove`` through the console script, HOME in a temp dir.

The end-to-end check is that a server added on the command line is the one a later ``nerve -p``
session starts and calls: the command writes where the session reads.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness, harness  # noqa: F401 (the fixture)
from tests.tools.mcp.conftest import SERVERS


def _claude_json(h: Harness) -> Path:
    # the harness sets CLAUDE_CONFIG_DIR, so Claude Code's state file lives there
    return Path(h.env["CLAUDE_CONFIG_DIR"]) / ".claude.json"


def _add_sum_scenario() -> Scenario:
    return Scenario.of(
        Turn([tool_use("ToolSearch", {"query": "select:mcp__calc__add"}, id="t_search")]),
        Turn(
            [tool_use("mcp__calc__add", {"a": 20, "b": 22}, id="t_add")],
            match=Match(tool_result_for="t_search"),
        ),
        Turn([text("The sum is 42.")], match=Match(tool_result_for="t_add")),
    )


def test_added_local_server_is_started_by_the_next_session(harness: Harness) -> None:  # noqa: F811
    add = harness.run(
        [
            "mcp",
            "add",
            "calc",
            "-e",
            "MARK=1",
            "--",
            sys.executable,
            str(SERVERS / "demo_server.py"),
        ],
        None,
    )
    assert add.rc == 0, add.stderr
    assert "Added stdio MCP server calc to local config" in add.stdout
    stored = json.loads(_claude_json(harness).read_text())
    entry = stored["projects"][str(harness.project.resolve())]["mcpServers"]["calc"]
    assert entry == {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(SERVERS / "demo_server.py")],
        "env": {"MARK": "1"},
    }

    run = harness.run(
        ["-p", "add 20 and 22", "--allowedTools", "mcp__calc__add"], _add_sum_scenario()
    )
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "The sum is 42."
    result = [
        b
        for b in run.server.requests[2].body["messages"][-1]["content"]
        if b["type"] == "tool_result"
    ]
    assert result[0]["content"] in ("42", [{"type": "text", "text": "42"}])

    listed = harness.run(["mcp", "list"], None)
    assert listed.rc == 0, listed.stderr
    assert f"calc: {sys.executable} {SERVERS / 'demo_server.py'}" in listed.stdout
    assert "Checking MCP server health..." in listed.stdout
    assert "✓ Connected [local]" in listed.stdout  # really started and initialised

    removed = harness.run(["mcp", "remove", "calc"], None)
    assert removed.rc == 0, removed.stderr
    assert "Removed MCP server calc from local config" in removed.stdout
    after = json.loads(_claude_json(harness).read_text())
    assert after["projects"][str(harness.project.resolve())]["mcpServers"] == {}
    assert "No MCP servers configured" in harness.run(["mcp", "list"], None).stdout


def test_http_headers_after_the_url_and_scopes(harness: Harness) -> None:  # noqa: F811
    claude_json = _claude_json(harness)
    claude_json.parent.mkdir(parents=True)
    claude_json.write_text(json.dumps({"numStartups": 7, "projects": {"/elsewhere": {"x": 1}}}))
    add = harness.run(
        [
            "mcp",
            "add",
            "--transport",
            "http",
            "-s",
            "user",
            "api",
            "https://mcp.example.com/mcp",
            "-H",
            "Authorization: Bearer tok",
            "--header",
            "X-Team: core",
        ],
        None,
    )
    assert add.rc == 0, add.stderr
    data = json.loads(claude_json.read_text())
    assert data["mcpServers"]["api"] == {
        "type": "http",
        "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer tok", "X-Team": "core"},
    }
    assert data["numStartups"] == 7 and data["projects"] == {"/elsewhere": {"x": 1}}  # kept

    project = harness.run(
        ["mcp", "add-json", "-s", "project", "shared", '{"command": "echo", "args": ["hi"]}'],
        None,
    )
    assert project.rc == 0, project.stderr
    assert json.loads((harness.project / ".mcp.json").read_text()) == {
        "mcpServers": {"shared": {"command": "echo", "args": ["hi"]}}
    }

    got = harness.run(["mcp", "get", "api"], None)
    assert got.rc == 0, got.stderr
    assert "Scope: User config (available in all your projects)" in got.stdout
    assert "URL: https://mcp.example.com/mcp" in got.stdout
    assert "Authorization: Bearer tok" in got.stdout

    harness.env["MCP_TIMEOUT"] = "3000"  # no network here: the remote server cannot be reached
    listed = harness.run(["mcp", "list"], None).stdout
    assert "api: https://mcp.example.com/mcp (http) - ✗ Failed to connect" in listed
    assert listed.rstrip().endswith("needs approval (project .mcp.json; /mcp approve) [project]")
    assert "shared: echo hi - needs approval" in listed

    # the same name in two scopes: remove asks which one, then removes only that one
    harness.run(["mcp", "add", "-s", "local", "api", "true"], None)
    ambiguous = harness.run(["mcp", "remove", "api"], None)
    assert ambiguous.rc == 1
    assert "exists in several scopes (local, user)" in ambiguous.stderr
    gone = harness.run(["mcp", "remove", "api", "-s", "user"], None)
    assert gone.rc == 0, gone.stderr
    data = json.loads(claude_json.read_text())
    assert "api" not in data["mcpServers"]
    assert "api" in data["projects"][str(harness.project.resolve())]["mcpServers"]


def test_bad_input_is_refused_and_nothing_is_written(harness: Harness) -> None:  # noqa: F811
    cases = [
        (["mcp", "add", "x"], "expected a NAME and a COMMAND-OR-URL"),
        (["mcp", "add", "-s", "global", "x", "cmd"], "invalid scope 'global'"),
        (["mcp", "add", "-t", "ws", "x", "ws://h"], "invalid transport 'ws'"),
        (["mcp", "add", "-e", "NOEQUALS", "x", "cmd"], "invalid environment variable"),
        (["mcp", "add", "-t", "http", "x", "https://h", "-H", "nocolon"], "invalid header"),
        (["mcp", "add", "-H", "A: b", "x", "cmd"], "headers (-H) apply to http and sse"),
        (["mcp", "add", "bad/name", "cmd"], "invalid server name"),
        (["mcp", "add-json", "x", '{"command":'], "invalid JSON"),
        (["mcp", "add-json", "x", '{"type": "http"}'], 'needs a "url" string'),
        (["mcp", "frobnicate"], "unknown or malformed command"),
    ]
    for args, message in cases:
        r = harness.run(args, None)
        assert r.rc == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr, (args, r.stderr)
    assert not _claude_json(harness).exists()
    assert not (harness.project / ".mcp.json").exists()

    missing = harness.run(["mcp", "get", "nope"], None)
    assert missing.rc == 1 and "No MCP server found with name: nope" in missing.stderr

    # a broken ~/.claude.json is named and left exactly as it was
    claude_json = _claude_json(harness)
    claude_json.parent.mkdir(parents=True)
    claude_json.write_text('{"projects": {')
    broken = harness.run(["mcp", "add", "x", "cmd"], None)
    assert broken.rc == 1
    assert f"{claude_json}:1:" in broken.stderr and "nothing was changed" in broken.stderr
    assert claude_json.read_text() == '{"projects": {'

    # an existing server is not overwritten
    claude_json.write_text("{}")
    assert harness.run(["mcp", "add", "x", "first"], None).rc == 0
    again = harness.run(["mcp", "add", "x", "second"], None)
    assert again.rc == 1 and "already exists in local config" in again.stderr
    assert "Command: first" in harness.run(["mcp", "get", "x"], None).stdout


def test_list_names_a_server_that_fails_to_start(harness: Harness) -> None:  # noqa: F811
    good = [sys.executable, str(SERVERS / "demo_server.py")]
    bad = [sys.executable, str(SERVERS / "exit_server.py")]
    assert harness.run(["mcp", "add", "good", "--", *good], None).rc == 0
    assert harness.run(["mcp", "add", "-s", "user", "bad", "--", *bad], None).rc == 0
    assert harness.run(["mcp", "add", "-s", "user", "gone", "/no/such/server"], None).rc == 0

    listed = harness.run(["mcp", "list"], None)

    assert listed.rc == 0, listed.stderr
    lines = {line.split(":", 1)[0]: line for line in listed.stdout.splitlines() if ": " in line}
    assert lines["good"].endswith("- ✓ Connected [local]")
    assert "✗ Failed to connect" in lines["bad"] and lines["bad"].endswith("[user]")
    assert "✗ Failed to connect" in lines["gone"]
