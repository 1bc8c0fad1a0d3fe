"""Claude Code's print-mode flags through a real ``nerve -p`` and the scripted server (issue 17
item 3): ``--mcp-config`` / ``--strict-mcp-config`` with real stdio MCP servers, ``--tools``,
``--setting-sources``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness
from tests.tools.mcp.conftest import SERVERS, live_pids_with

_ALLOW_ADD = ("--allowedTools", "mcp__cli__add")
_ALLOW_ECHO = ("--allowedTools", "mcp__cli__echo")


def _server(token: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / "demo_server.py"), token]}


def _names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def _result_text(body: dict[str, Any], tool_use_id: str) -> str:
    (block,) = (
        b
        for b in body["messages"][-1]["content"]
        if b.get("type") == "tool_result" and b["tool_use_id"] == tool_use_id
    )
    content = block["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content)
    return str(content)


def _user_mcp(harness: Harness, servers: dict[str, Any]) -> None:
    path = Path(harness.env["NERVE_CONFIG_DIR"]) / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def test_mcp_config_file_and_inline_json_add_servers(harness: Harness) -> None:
    token = f"flags-{harness.root.name}"
    config = harness.project / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"cli": _server(token)}}))
    inline = json.dumps({"mcpServers": {"inline": _server(token)}})
    _user_mcp(harness, {"userdemo": _server(token)})
    scenario = Scenario.of(
        Turn([tool_use("ToolSearch", {"query": "select:mcp__cli__add"}, id="t_search")]),
        Turn(
            [tool_use("mcp__cli__add", {"a": 40, "b": 2}, id="t_add")],
            match=Match(tool_result_for="t_search"),
        ),
        Turn([text("42")], match=Match(tool_result_for="t_add")),
    )
    run = harness.run(
        ["-p", "add", "--mcp-config", "servers.json", "--mcp-config", inline, *_ALLOW_ADD],
        scenario,
    )
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "42"
    first, _, third = (r.body for r in run.server.requests)
    names = _names(first)
    for server in ("cli", "inline", "userdemo"):  # the configured servers stay, the flags add
        assert f"mcp__{server}__add" in names
    assert _result_text(third, "t_add") == "42"
    assert live_pids_with(token) == []


def test_strict_mcp_config_uses_only_those_servers(harness: Harness) -> None:
    token = f"strict-{harness.root.name}"
    _user_mcp(harness, {"userdemo": _server(token)})
    (harness.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"projectdemo": _server(token)}})
    )
    inline = json.dumps({"mcpServers": {"cli": _server(token)}})
    scenario = Scenario.of(
        Turn([tool_use("mcp__cli__echo", {"text": "strict"}, id="t_echo")]),
        Turn([text("done")], match=Match(tool_result_for="t_echo")),
    )
    # --tools "" offers no built-in (so no ToolSearch): the MCP tools go in full, callable at once
    run = harness.run(
        ["-p", "echo", "--mcp-config", inline, "--strict-mcp-config", "--tools", "", *_ALLOW_ECHO],
        scenario,
    )
    assert run.rc == 0, run.stderr
    first, second = (r.body for r in run.server.requests)
    # the MCP resource tools come with any server; every other tool is the cli server's
    names = [n for n in _names(first) if n not in ("ListMcpResourcesTool", "ReadMcpResourceTool")]
    assert "mcp__cli__echo" in names and all(n.startswith("mcp__cli__") for n in names), names
    assert all("defer_loading" not in t for t in first["tools"])
    assert _result_text(second, "t_echo") == "strict"
    # not even listed as awaiting approval: the project file was not read
    assert "projectdemo" not in run.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("missing.json", "--mcp-config missing.json: file not found"),
        ("{not json", "--mcp-config (inline JSON): invalid JSON at line 1"),
        ('{"servers": {}}', 'expected {"mcpServers"'),
        ('{"mcpServers": {"x": {"args": []}}}', "MCP server 'x' (--mcp-config (inline JSON)):"),
    ],
)
def test_a_bad_mcp_config_is_a_clear_error_before_anything_runs(
    harness: Harness, value: str, message: str
) -> None:
    run = harness.run(["-p", "hi", "--mcp-config", value], None)
    assert run.rc == 1
    assert message in run.stderr
    assert harness.transcripts() == []  # nothing started, nothing written


def test_tools_chooses_the_built_ins_offered(harness: Harness) -> None:
    offered = []
    for flags in (["--tools", "Bash,Read"], ["--tools", "default"], []):
        run = harness.run(["-p", "hi", *flags], Scenario.of(Turn([text("ok")])))
        assert run.rc == 0, run.stderr
        offered.append(_names(run.server.requests[0].body))
    limited, default, plain = offered
    assert limited == ["Bash", "Read"]
    assert default == plain and {"Bash", "Read", "Edit", "Write", "Grep"} <= set(plain)


def test_tools_none_and_unknown(harness: Harness) -> None:
    run = harness.run(["-p", "hi", "--tools", ""], Scenario.of(Turn([text("no tools")])))
    assert run.rc == 0, run.stderr
    assert _names(run.server.requests[0].body) == []
    bad = harness.run(["-p", "hi", "--tools", "Bash,Bsh"], None)
    assert bad.rc == 1
    assert "--tools: unknown tool(s) Bsh" in bad.stderr and "Read" in bad.stderr


@pytest.mark.parametrize(
    ("sources", "model"),
    [
        (None, "model-local"),
        ("user,project", "model-project"),
        ("user", "model-user"),
        ("project", "model-project"),
        ("", "model-default"),
    ],
)
def test_setting_sources_load_only_those_layers_and_policy_always(
    harness: Harness, sources: str | None, model: str
) -> None:
    harness.env["NERVE_TRUST_ALL"] = "1"
    harness.env["ANTHROPIC_MODEL"] = "model-default"  # what is left when no layer sets "env"
    home = Path(harness.env["CLAUDE_CONFIG_DIR"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_MODEL": "model-user"}}))
    claude = harness.project / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_MODEL": "model-project"}}))
    (claude / "settings.local.json").write_text(
        json.dumps({"env": {"ANTHROPIC_MODEL": "model-local"}})
    )
    policy = harness.root / "policy" / "managed-settings.json"
    policy.write_text(json.dumps({"permissions": {"deny": ["WebFetch"]}}))
    flags = [] if sources is None else ["--setting-sources", sources]
    run = harness.run(["-p", "hi", *flags], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    body = run.server.requests[0].body
    assert body["model"] == model
    names = _names(body)
    assert "Read" in names and "WebFetch" not in names  # policy loads whatever the sources


def test_setting_sources_rejects_an_unknown_source(harness: Harness) -> None:
    run = harness.run(["-p", "hi", "--setting-sources", "user,team"], None)
    assert run.rc != 0
    assert "--setting-sources: unknown source 'team'" in run.stderr


def test_session_id_names_the_session_and_is_checked(harness: Harness) -> None:
    sid = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
    run = harness.run(
        ["-p", "hi", "--session-id", sid, "--output-format", "json"],
        Scenario.of(Turn([text("ok")])),
    )
    assert run.rc == 0, run.stderr
    assert run.json()["session_id"] == sid
    assert [p.stem for p in harness.transcripts()] == [sid]
    again = harness.run(["-p", "hi", "--session-id", sid], None)
    assert again.rc == 1 and f"--session-id {sid} is already in use" in again.stderr
    for bad in ("../../escape", "not-a-uuid"):
        run = harness.run(["-p", "hi", "--session-id", bad], None)
        assert run.rc == 2 and "--session-id must be a UUID" in run.stderr
    assert [p.stem for p in harness.transcripts()] == [sid]
