"""``/add-dir`` and ``/export`` in the app over a real session and the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.slash.views import EXPORT_RESULT_LINES
from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.widgets.items import NoticeLine, ToolCall
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401  (fixtures)


def _last(app: Any) -> str:
    return str(app.query(NoticeLine).last().notice_text)


async def _send(pilot: Any, line: str) -> None:
    pilot.app.prompt_input.load_text(line)
    await pilot.press("enter")
    await pilot.pause()


def _told_about(other: Path) -> Any:
    def check(body: Any) -> bool:
        return f"added {other} as a working directory" in json.dumps(body["messages"])

    return check


async def test_add_dir_lets_the_model_read_there_without_asking_then_export_writes_it_down(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    other = project.parent / "other"
    other.mkdir()
    notes = other / "notes.txt"
    notes.write_text("".join(f"line {i}\n" for i in range(1, 31)))
    server = serve(
        Scenario.of(
            Turn(
                [text("Reading it."), tool_use("Read", {"file_path": str(notes)}, id="r1")],
                match=Match(predicate=_told_about(other)),
            ),
            Turn([text("It has 30 lines.")], match=Match(tool_result_for="r1")),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "/add-dir nowhere")
        assert _last(app) == f"{project / 'nowhere'} is not a directory"
        await _send(pilot, "/add-dir .")
        assert "already inside the working directory" in _last(app)
        await _send(pilot, "/add-dir ../other")
        assert _last(app) == f"Added {other} as a working directory for this session."

        await _send(pilot, "how long are the notes?")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert not isinstance(app.screen, PermissionScreen)  # a working directory: no prompt
        read = app.query_one(ToolCall)
        assert read.result_text == "Read 30 lines" and "line 30" in (read.detail_text or "")

        await _send(pilot, "/export talk.txt")
        assert _last(app) == f"Conversation exported to {project / 'talk.txt'}."
        exported = (project / "talk.txt").read_text()
        await _send(pilot, "/export talk.txt")
        assert "exists; give /export another file name" in _last(app)
        assert (project / "talk.txt").read_text() == exported  # never overwritten
    server.assert_done()
    lines = exported.splitlines()
    assert lines[0] == "> how long are the notes?"
    assert "Reading it." in lines and "It has 30 lines." in lines
    assert f"● Read({notes})" in lines
    assert any(line.endswith("line 1") and line.startswith("  ⎿  ") for line in lines)
    assert f"… +{30 - EXPORT_RESULT_LINES} lines" in exported  # long results are cut
    assert "system-reminder" not in exported and "working directory" not in exported


def test_the_default_export_name_is_the_time_and_the_first_prompt() -> None:
    from agent_cli.slash.workspace_commands import default_export_name

    messages = [{"role": "user", "content": "Fix the failing test in tests/test_api.py, please"}]
    name = default_export_name(messages, now=0)
    assert name.endswith("-fix-the-failing-test-in-tests.txt") and name[:4].isdigit()
    assert default_export_name([], now=0).endswith("-conversation.txt")
