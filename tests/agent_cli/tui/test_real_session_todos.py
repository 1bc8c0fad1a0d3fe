"""The TodoWrite checklist and ``/todos`` in the TUI over the REAL session and scripted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.widgets.items import NoticeLine, ToolCall
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401  (fixtures)

TODOS = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


async def test_todo_write_shows_a_checklist_and_todos_lists_it(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    server = serve(
        Scenario.of(
            Turn([tool_use("TodoWrite", {"todos": TODOS}, id="w1")]),
            Turn([text("Working on it.")], match=Match(tool_result_for="w1")),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("fix the parser")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert not isinstance(app.screen, PermissionScreen)  # it never asked
        tool = app.query_one(ToolCall)
        assert not tool.is_error
        assert tool.result_text == "☑ Read the parser\n◐ Fix the bug\n☐ Run the tests"
        app.prompt_input.load_text("/todos")
        app.prompt_input.completion_list.hide()
        await pilot.press("enter")
        await pilot.pause(0.02)
        notice = str(app.query(NoticeLine).last().notice_text)
        assert notice.startswith("Todos (1/3 completed):")
        assert "◐ Fix the bug" in notice
    server.assert_done()
