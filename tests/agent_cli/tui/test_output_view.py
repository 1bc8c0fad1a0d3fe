"""Output in the app: summaries for the user while the model gets its text, long results
collapsed (short ones open), Ctrl+O for the full transcript. Pilot over the REAL AgentSession,
real tools and the scripted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.summaries import diff_counts, rejected_label, user_view
from agent_cli.tui.widgets.items import ToolCall
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve

__all__ = ["project", "serve"]  # fixtures shared with the real-session tests

BYPASS = {"permission_mode": "bypassPermissions", "dangerously_skip_permissions": True}


def _body(widget: ToolCall) -> str:
    return str(widget.query_one(".tool-body").render())


async def _run(pilot: Any, prompt: str) -> None:
    pilot.app.prompt_input.load_text(prompt)
    await pilot.press("enter")
    await wait_for(pilot, lambda: pilot.app.query(ToolCall), timeout=15)


def test_summaries_read_live_and_stored_outputs() -> None:
    diff = "--- a\n+++ a\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n keep\n"
    assert diff_counts(diff) == (2, 1)
    stored = {"file_path": "/p/x.py", "diff": diff, "message": "The file /p/x.py has been updated."}
    view = user_view("Edit", "for the model", False, stored, Path("/p"))
    assert str(view.text).startswith("Updated x.py: 2 additions, 1 removal\n@@ -1,2 +1,2 @@")
    created = {"file_path": "/p/n.py", "kind": "create", "diff": "+++ n\n+a\n+b\n", "message": ""}
    assert (
        user_view("Write", "", False, created, Path("/p")).text == "Created n.py (2 lines)\n+a\n+b"
    )
    read = user_view("Read", "1\tx", False, {"kind": "text", "num_lines": 1}, None)
    assert (read.text, read.detail) == ("Read 1 line", "1\tx")
    assert user_view("Edit", "boom", True, stored, None).text == "boom"  # errors as they are
    edit = {"file_path": "/p/x.py"}
    assert rejected_label("Edit", edit, "Rejected", Path("/p")) == "Rejected edit of x.py"
    assert rejected_label("Edit", edit, "Rejected: no", None) == "Rejected edit of /p/x.py: no"
    assert rejected_label("Bash", {"command": "ls"}, "Rejected", None) == "Rejected"


async def test_an_edit_shows_counts_and_diff_while_the_model_gets_its_text(
    project: Path, serve: Any
) -> None:
    hello = project / "hello.py"
    hello.write_text("import sys\nprint('hi')\n")
    edit = {"file_path": str(hello), "old_string": "print('hi')", "new_string": "print('hello')"}
    server = serve(
        Scenario.of(
            Turn([tool_use("Read", {"file_path": str(hello)}, id="r1")]),
            Turn([tool_use("Edit", edit, id="e1")], match=Match(tool_result_for="r1")),
            Turn(
                [text("Changed.")],
                match=Match(tool_result_for="e1", contains_text="result of running `cat -n`"),
            ),
        )
    )
    app = _app(project, **BYPASS)
    async with app.run_test(size=SIZE) as pilot:
        await _run(pilot, "say hello")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        read, change = app.query(ToolCall)
        assert read.result_text == "Read 2 lines"
        assert change.result_text is not None
        lines = change.result_text.splitlines()
        assert lines[0] == "Updated hello.py: 1 addition, 1 removal", lines
        assert "-print('hi')" in lines and "+print('hello')" in lines, lines
        assert "cat -n" not in _body(change) and "has been updated" not in _body(change)
        await pilot.press("ctrl+o")  # the full transcript: what the Read gave the model
        assert "print('hi')" in _body(read) and "Read 2 lines" not in _body(read)
        assert "Updated hello.py" in _body(change)  # an edit still reads as its diff
    assert hello.read_text() == "import sys\nprint('hello')\n"
    server.assert_done()


async def test_a_rejected_edit_says_so(project: Path, serve: Any) -> None:
    hello = project / "hello.py"
    hello.write_text("print('hi')\n")
    edit = {"file_path": str(hello), "old_string": "hi", "new_string": "bye"}
    server = serve(Scenario.of(Turn([tool_use("Edit", edit, id="e1")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _run(pilot, "change it")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), timeout=15)
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        change = app.query_one(ToolCall)
        assert change.result_text == "Rejected edit of hello.py", change.result_text
        assert "doesn't want" not in _body(change)
    assert hello.read_text() == "print('hi')\n"
    server.assert_done()


async def test_ctrl_o_expands_long_results_and_short_ones_stay_open(
    project: Path, serve: Any
) -> None:
    server = serve(
        Scenario.of(
            Turn(
                [
                    tool_use("Bash", {"command": "seq 1 30"}, id="b1"),
                    tool_use("Bash", {"command": "seq 1 4"}, id="b2"),
                ]
            ),
            Turn([text("Counted.")], match=Match(tool_result_for="b2")),
        )
    )
    app = _app(project, **BYPASS)
    async with app.run_test(size=SIZE) as pilot:
        await _run(pilot, "count")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        long, short = app.query(ToolCall)
        assert "+25 lines (ctrl+o to expand)" in _body(long) and "\n    6" not in _body(long)
        assert _body(short).split() == ["⎿", "1", "2", "3", "4"]  # 4 lines: not collapsed
        await pilot.press("ctrl+o")
        assert app.transcript_full and "30" in _body(long).split() and "ctrl+o" not in _body(long)
        await pilot.press("ctrl+o")
        assert not app.transcript_full and "+25 lines (ctrl+o to expand)" in _body(long)
    server.assert_done()
