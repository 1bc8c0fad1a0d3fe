"""/status and /doctor in the app over a real session (real SDK config, scripted server)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from agent_cli import __version__
from agent_cli.testing import Scenario
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve
from tests.tools.mcp.conftest import SERVERS

__all__ = ["project", "serve"]  # fixtures shared with test_real_session


def _notices(app: Any) -> list[str]:
    return [n.notice_text for n in app.query(NoticeLine)]


async def _send(pilot: Any, line: str) -> None:
    pilot.app.prompt_input.load_text(line)
    await pilot.press("enter")


async def test_status_and_doctor_in_the_app(project: Path, serve: Any) -> None:
    claude_json = Path(os.environ["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    claude_json.parent.mkdir(parents=True)
    demo = {"command": sys.executable, "args": [str(SERVERS / "demo_server.py")]}
    claude_json.write_text(json.dumps({"mcpServers": {"calc": demo}}))
    server = serve(Scenario.of())
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:

        def connected() -> bool:
            return any(v.status == "connected" for v in app.session.mcp_servers())

        await wait_for(pilot, connected, timeout=15)
        await _send(pilot, "/status")
        await wait_for(pilot, lambda: any("Version: Nerve" in n for n in _notices(app)))
        status = next(n for n in _notices(app) if "Version: Nerve" in n).splitlines()
        assert f"Version: Nerve {__version__}" in status
        assert f"cwd: {project}" in status
        assert f"Endpoint: {server.base_url}" in status
        assert "Permission mode: default" in status
        assert "  calc (user, stdio): connected" in status

        await _send(pilot, "/doctor")
        await wait_for(pilot, lambda: any("Nerve doctor:" in n for n in _notices(app)), timeout=15)
        doctor = next(n for n in _notices(app) if "Nerve doctor:" in n)
        assert f"✓ Endpoint: {server.base_url} reachable" in doctor
        assert "✓ Credential: API key (ANTHROPIC_API_KEY)" in doctor
        assert "✓ Settings: " in doctor
        await wait_for(pilot, lambda: any(n.startswith("No problems") for n in _notices(app)))
    assert server.requests == [] and server.failures == []
