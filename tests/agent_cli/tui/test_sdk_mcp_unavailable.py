"""The TUI over a real session with an Agent SDK in-process server (``{"type": "sdk"}``) in
``--mcp-config``: no SDK drives it, so the server is reported unavailable and the session goes
on (``/mcp`` says why)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.testing import Scenario, Turn, text
from agent_cli.tui.widgets.items import NoticeLine
from agent_cli.tui.widgets.markdown import AssistantMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve

__all__ = ["project", "serve"]

SDK_SERVER = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})


def _notices(app: Any) -> list[str]:
    return [n.notice_text for n in app.query(NoticeLine)]


async def test_an_sdk_server_is_reported_unavailable_and_the_turn_runs(
    project: Path, serve: Any
) -> None:
    server = serve(Scenario.of(Turn([text("Hello.")])))
    app = _app(project, mcp_configs=[SDK_SERVER])
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("hi")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any(a.source == "Hello." for a in app.query(AssistantMessage)), 15
        )
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        unavailable = [n for n in _notices(app) if "MCP server calc failed to start" in n]
        assert unavailable and "only when the Agent SDK drives nerve" in unavailable[0]
        assert app.session.mcp_servers()[0].status == "failed"
    server.assert_done()
