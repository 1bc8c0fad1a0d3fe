"""The first-start modal about a project's ``.mcp.json`` servers, over the real session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_cli.testing import Scenario
from agent_cli.tui.screens.picker import ChoiceScreen
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401
from tests.tools.mcp.conftest import SERVERS, live_pids_with


def _notices(app: Any) -> list[str]:
    return [str(n.notice_text) for n in app.query(NoticeLine)]


def _mcp_json(root: Path, token: str) -> None:
    demo = {"command": sys.executable, "args": [str(SERVERS / "demo_server.py"), token]}
    remote = {"type": "sse", "url": "http://127.0.0.1:9/sse"}
    servers = {"demo": demo, "remote": remote}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


def _local(root: Path) -> Any:
    return json.loads((root / ".claude" / "settings.local.json").read_text())


async def test_pick_which_project_servers_to_use(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    token = f"approve-{tmp_path.name}"
    _mcp_json(project, token)
    serve(Scenario.of())
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), timeout=30)
        screen = app.screen
        assert isinstance(screen, ChoiceScreen)
        assert f"demo: {sys.executable} {SERVERS / 'demo_server.py'}" in screen.title_text
        assert "remote: http://127.0.0.1:9/sse" in screen.title_text
        assert screen.options[0].startswith("No")  # a stray Enter starts nothing
        await pilot.press("down", "down", "enter")  # Pick which to use…
        await wait_for(pilot, lambda: "Use MCP server demo?" in app.screen.title_text)
        await pilot.press("down", "enter")  # Yes
        await wait_for(pilot, lambda: "Use MCP server remote?" in app.screen.title_text)
        await pilot.press("enter")  # No
        await wait_for(
            pilot, lambda: any("MCP server demo connected" in n for n in _notices(app)), 30
        )
        assert any("Not using: remote" in n for n in _notices(app))
        assert "mcp__demo__add" in {t.name for t in app.session.tools()}
        assert {v.name: v.status for v in app.session.mcp_servers()} == {"demo": "connected"}
    assert _local(project) == {
        "enabledMcpjsonServers": ["demo"],
        "disabledMcpjsonServers": ["remote"],
    }
    assert live_pids_with(token) == []


async def test_use_all_and_esc_decides_nothing(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    token = f"approve-all-{tmp_path.name}"
    _mcp_json(project, token)
    serve(Scenario.of())
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), timeout=30)
        await pilot.press("escape")
        await wait_for(pilot, lambda: any("asked again" in n for n in _notices(app)))
        assert not (project / ".claude" / "settings.local.json").exists()
        # /mcp approve asks again; this time: use all.
        app.prompt_input.load_text("/mcp approve")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("down", "enter")
        await wait_for(
            pilot, lambda: any("MCP server demo connected" in n for n in _notices(app)), 30
        )
        assert any("MCP server remote failed to start" in n for n in _notices(app))
    assert _local(project) == {"enableAllProjectMcpServers": True}
    assert live_pids_with(token) == []


async def test_mcp_view_disables_and_enables_a_server(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    token = f"view-{tmp_path.name}"
    _mcp_json(project, token)
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(
        json.dumps({"enabledMcpjsonServers": ["demo"], "disabledMcpjsonServers": ["remote"]})
    )
    serve(Scenario.of())
    app = _app(project)

    def status() -> dict[str, str]:
        return {v.name: v.status for v in app.session.mcp_servers()}

    async def open_view() -> None:
        app.prompt_input.load_text("/mcp")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session_ready, timeout=30)
        await wait_for(pilot, lambda: status() == {"demo": "connected"}, timeout=30)
        await open_view()
        assert app.screen.options == ["demo (project, stdio): connected"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: "MCP server demo: connected" in app.screen.title_text)
        assert app.screen.options == ["Reconnect", "Disable"]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: any("MCP server demo disabled" in n for n in _notices(app)))
        assert status() == {"demo": "disabled"}
        assert "mcp__demo__add" not in {t.name for t in app.session.tools()}
        assert live_pids_with(token) == []
        await open_view()
        await pilot.press("enter")
        await wait_for(pilot, lambda: "MCP server demo: disabled" in app.screen.title_text)
        assert app.screen.options == ["Enable"]
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any("MCP server demo connected" in n for n in _notices(app)), 30
        )
        assert "mcp__demo__add" in {t.name for t in app.session.tools()}
    assert live_pids_with(token) == []
