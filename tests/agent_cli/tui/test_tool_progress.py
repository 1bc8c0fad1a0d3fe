"""Each tool's progress in the app as it comes: Bash's last lines, count and running time;
Grep and Glob counts; a sub-agent's current tool. Pilot over the REAL AgentSession, real tools
and the scripted server; a running command waits for a file the test creates (no sleeps)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_cli.loop.events import ToolProgress
from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.widgets.items import ToolCall
from tests.agent_cli.agents.test_runner import child, parent
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve

__all__ = ["project", "serve"]  # fixtures shared with the real-session tests

BYPASS = {"permission_mode": "bypassPermissions", "dangerously_skip_permissions": True}
WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done"


def _body(widget: ToolCall) -> str:
    return str(widget.query_one(".tool-body").render())


def _record_progress(app: Any) -> list[ToolProgress]:
    seen: list[ToolProgress] = []
    handle = app.event_view.handle

    async def recording(event: Any) -> None:
        if isinstance(event, ToolProgress):
            seen.append(event)
        await handle(event)

    app.event_view.handle = recording
    return seen


async def test_bash_shows_last_lines_count_and_running_time(project: Path, serve: Any) -> None:
    command = f"for i in $(seq 1 8); do echo line $i; done; {WAIT_FOR_GO}; echo finished"
    server = serve(
        Scenario.of(
            Turn([tool_use("Bash", {"command": command}, id="b1")]),
            Turn([text("Ran it.")], match=Match(tool_result_for="b1")),
        )
    )
    app = _app(project, **BYPASS)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("run it")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(ToolCall), timeout=15)
        tool = app.query_one(ToolCall)
        await wait_for(pilot, lambda: "8 lines" in _body(tool), timeout=15)
        body = _body(tool)
        assert "line 8" in body and "line 4" in body and "line 3" not in body, body  # the last 5
        assert re.search(r"… 8 lines, \d+ bytes · \d+s", body), body
        (project / "go").touch()
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert tool.result_text is not None and "finished" in tool.result_text
        assert "· " not in _body(tool).splitlines()[0], "the running time goes with the result"
    server.assert_done()


async def test_grep_and_glob_show_counts(project: Path, serve: Any) -> None:
    for name in ("a.py", "b.py", "c.txt"):
        (project / name).write_text("needle\n")
    server = serve(
        Scenario.of(
            Turn(
                [
                    tool_use("Grep", {"pattern": "needle"}, id="g1"),
                    tool_use("Glob", {"pattern": "*.py"}, id="g2"),
                ]
            ),
            Turn([text("Found them.")], match=Match(tool_result_for="g2")),
        )
    )
    app = _app(project)
    seen = _record_progress(app)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("find")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
    texts = {e.tool_use_id: e.text for e in seen}  # the last view of each call
    assert texts.get("g1") == "3 files", seen
    assert texts.get("g2") == "2 files matched", seen
    server.assert_done()


async def test_a_sub_agent_shows_its_current_tool(project: Path, serve: Any) -> None:
    command = f"echo child; {WAIT_FOR_GO}"
    server = serve(
        Scenario.of(
            Turn(
                [tool_use("Agent", {"description": "do it", "prompt": "run"}, id="ag")],
                match=parent(),
            ),
            Turn([tool_use("Bash", {"command": command}, id="cb")], match=child()),
            Turn([text("child done")], match=child(tool_result_for="cb")),
            Turn([text("All done.")], match=parent(tool_result_for="ag")),
        )
    )
    app = _app(project, **BYPASS)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("delegate")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(ToolCall), timeout=15)
        agent = app.query(ToolCall).first()
        await wait_for(pilot, lambda: "echo child" in _body(agent), timeout=20)
        assert "Bash(" in _body(agent), _body(agent)
        (project / "go").touch()
        await wait_for(pilot, lambda: not app.turn_running, timeout=20)
        assert agent.result_text is not None and not agent.is_error
    server.assert_done()


async def test_a_silent_command_shows_running_and_its_time(project: Path, serve: Any) -> None:
    server = serve(
        Scenario.of(
            Turn([tool_use("Bash", {"command": WAIT_FOR_GO}, id="b1")]),
            Turn([text("Done.")], match=Match(tool_result_for="b1")),
        )
    )
    app = _app(project, **BYPASS)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("wait")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(ToolCall), timeout=15)
        tool = app.query_one(ToolCall)
        await wait_for(pilot, lambda: "Running… (" in _body(tool), timeout=15)
        assert re.fullmatch(r"\s*⎿ Running… \(\d+s\)", _body(tool)), _body(tool)
        (project / "go").touch()
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert "Running" not in _body(tool)
    server.assert_done()
