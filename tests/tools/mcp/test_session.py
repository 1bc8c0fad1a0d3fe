"""An in-process session with a user-scope MCP server: prewarm connects, the turn uses it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agent_cli.loop.events import Notice, TurnFinished
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.tools.mcp.conftest import SERVERS, live_pids_with


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_")):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NERVE_POLICY_DIR", str(tmp_path / "policy"))
    monkeypatch.setenv("NERVE_CLAUDE_POLICY_DIR", str(tmp_path / "cpolicy"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    project = tmp_path / "project"
    project.mkdir()
    return project


async def test_session_connects_user_servers_and_closes_them(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = f"session-{tmp_path.name}"
    config = tmp_path / "home" / ".nerve" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "calc": {
                        "command": sys.executable,
                        "args": [str(SERVERS / "demo_server.py"), token],
                    },
                    "broken": {"command": "/no/such/server"},
                }
            }
        )
    )
    scenario = Scenario.of(
        Turn([tool_use("ToolSearch", {"query": "select:mcp__calc__add"}, id="s")]),
        Turn(
            [tool_use("mcp__calc__add", {"a": 1, "b": 41}, id="a")],
            match=Match(tool_result_for="s"),
        ),
        Turn([text("42")], match=Match(tool_result_for="a", contains_text="42")),
    )
    async with ScriptedServer(scenario) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        session = AgentSession.create(RunOptions(allowed_tools=["mcp__calc"]), cwd=project)
        try:
            session.prewarm()  # what the TUI does after its first frame: servers start now
            events = [ev async for ev in session.run_turn("add")]
            finished = [e for e in events if isinstance(e, TurnFinished)]
            assert finished and finished[0].result_text == "42"
            notices = [e.text for e in events if isinstance(e, Notice)]
            assert any("MCP server broken failed to start" in n for n in notices)
            status = {v.name: v.status for v in session.mcp_servers()}
            assert status == {"calc": "connected", "broken": "failed"}
            views = {t.name: t for t in session.tools()}
            assert views["mcp__calc__add"].is_mcp and not views["mcp__calc__add"].deferred
            assert views["mcp__calc__echo"].deferred
            assert live_pids_with(token)
        finally:
            await session.close()
        server.assert_done()
    assert live_pids_with(token) == []


def _user_server(tmp_path: Path, token: str) -> None:
    config = tmp_path / "home" / ".nerve" / "mcp.json"
    config.parent.mkdir(parents=True)
    args = [str(SERVERS / "demo_server.py"), token]
    config.write_text(
        json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": args}}})
    )


async def test_mcp_prompt_is_a_slash_command_and_mcp_actions_change_the_pool(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.frontends.print.slash import PrintSlashHost
    from agent_cli.slash.builtin import registry_for

    token = f"prompts-{tmp_path.name}"
    _user_server(tmp_path, token)
    scenario = Scenario.of(
        Turn([text("reviewed")], match=Match(contains_text="Review a.py looking for speed.")),
        Turn([text("second")], match=Match(contains_text="Review b c.py looking for bugs.")),
    )
    async with ScriptedServer(scenario) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        session = AgentSession.create(RunOptions(), cwd=project)
        try:
            events = [ev async for ev in session.run_turn("/mcp__demo__review a.py speed")]
            finished = [e for e in events if isinstance(e, TurnFinished)]
            assert finished and finished[0].result_text == "reviewed"
            events = [ev async for ev in session.run_turn('/mcp__demo__review "b c.py"')]
            assert [e.result_text for e in events if isinstance(e, TurnFinished)] == ["second"]
            # A missing required argument is the user's error; nothing reaches the model.
            events = [ev async for ev in session.run_turn("/mcp__demo__review")]
            (done,) = [e for e in events if isinstance(e, TurnFinished)]
            assert done.is_error
            assert any("needs: <path>" in getattr(e, "message", "") for e in events)
            host = PrintSlashHost(session)
            registry = registry_for(host)
            command = registry.get("mcp__demo__review")
            assert command is not None and command.argument_hint == "<path> [focus]"
            await registry.run(host, "mcp", "disable demo")
            assert host.lines[-1] == ("info", "MCP server demo disabled")
            assert not [t for t in session.tools() if t.name.startswith("mcp__demo__")]
            assert {v.name: v.status for v in session.mcp_servers()} == {"demo": "disabled"}
            assert live_pids_with(token) == []
            assert registry_for(host).get("mcp__demo__review") is None
            await registry.run(host, "mcp", "enable demo")
            assert host.lines[-1][1].startswith("MCP server demo connected (")
            assert "mcp__demo__add" in {t.name for t in session.tools()}
            await registry.run(host, "mcp", "reconnect nope")
            assert "no MCP server named 'nope'" in host.lines[-1][1]
            await registry.run(host, "mcp", "")
            assert "demo (user, stdio): connected" in host.lines[-1][1]
        finally:
            await session.close()
        server.assert_done()
    assert live_pids_with(token) == []


async def test_project_servers_wait_for_approval_saved_in_local_settings(
    project: Path, tmp_path: Path
) -> None:
    import subprocess

    from agent_cli.frontends.print.slash import PrintSlashHost
    from agent_cli.slash.builtin import registry_for

    token = f"approve-{tmp_path.name}"
    demo = {"command": sys.executable, "args": [str(SERVERS / "demo_server.py"), token]}
    servers = {"demo": demo, "other": {"command": "/bin/false"}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    session = AgentSession.create(RunOptions(), cwd=project)
    host = PrintSlashHost(session)
    try:
        await registry_for(host).run(host, "mcp", "")
        listing = host.lines[-1][1]
        assert "demo (project, stdio): needs approval" in listing and str(SERVERS) in listing
        assert "/mcp approve" in listing
        await registry_for(host).run(host, "mcp", "approve nope")
        assert (
            host.lines[-1][0] == "error" and "not waiting for approval: nope" in host.lines[-1][1]
        )
        await registry_for(host).run(host, "mcp", "approve demo")
        said = host.lines[-1][1]
        assert "MCP server demo connected" in said and "Not using: other" in said
        assert {v.name: v.status for v in session.mcp_servers()} == {"demo": "connected"}
        assert "mcp__demo__add" in {t.name for t in session.tools()}
    finally:
        await session.close()
    saved = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert saved == {"enabledMcpjsonServers": ["demo"], "disabledMcpjsonServers": ["other"]}
    # The next session starts the approved server and does not ask about the declined one.
    again = AgentSession.create(RunOptions(), cwd=project)
    try:
        assert {v.name: v.status for v in again.mcp_servers()} == {"demo": "pending"}
    finally:
        await again.close()
    assert live_pids_with(token) == []
