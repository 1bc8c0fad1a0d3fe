"""A sandboxed command's new domain asks in the TUI, through the normal permission modal."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401
from tests.tools.sandbox.support import needs_sandbox
from tests.tools.sandbox.test_network import CLIENT, _Hello

pytestmark = needs_sandbox


@pytest.fixture
def host_server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


async def test_a_new_domain_asks_in_the_modal_and_always_lets_it_through(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    host_server: int,
) -> None:
    settings = project.parent / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    # listed by name for another port: a prompt for this one, and local addresses stay closed
    # unless a name is listed (tests reach only 127.0.0.1)
    settings.write_text(
        json.dumps({"sandbox": {"enabled": True, "network": {"allowedDomains": ["localhost:1"]}}})
    )
    (project / "client.py").write_text(CLIENT)
    command = f"{sys.executable} client.py localhost {host_server} plain"
    server = serve(
        Scenario.of(
            Turn([tool_use("Bash", {"command": command}, id="t1")]),
            Turn([text("Fetched.")], match=Match(tool_result_for="t1")),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("fetch it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), timeout=30)
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        # the Bash call itself was auto-allowed by the sandbox: this is the network question
        assert screen.prompt.title == f"Network access to localhost:{host_server} from the sandbox"
        assert "WebFetch(domain:localhost)" in str(screen.prompt.verdict.suggestions[0])
        await pilot.press("a")  # Yes, and don't ask again
        await wait_for(pilot, lambda: not app.turn_running, timeout=30)
    server.assert_done()
    saved = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert "WebFetch(domain:localhost)" in saved["permissions"]["allow"]
    [result] = [
        b
        for b in server.requests[1].body["messages"][-1]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert "200 hello from the host" in json.dumps(result["content"])
