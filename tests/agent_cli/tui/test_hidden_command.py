"""The permission prompt shows what will run (issue 32, item 5): a Bash command that hides a
second command behind a carriage return or an escape sequence (``touch pwned #\\x1b[2K\\rgit
status`` prints as ``git status``) shows them written out (``\\x1b``, ``\\r``, ``\\u202e``), says
so in a warning line, and is never offered "don't ask again"; the conversation's header of the
call shows them the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.loop.events import TurnFinished
from agent_cli.testing import Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.widgets.items import ToolCall
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import Ask, FakeSession, bash_prompt
from tests.agent_cli.tui.test_real_session import _app, _ask, project, serve  # noqa: F401
from tools.context import PermissionAnswer

WARNING = "This command contains control characters or escape sequences, shown as \\xNN"
# Printed, the erase-line and the carriage return leave only "git status" on the screen.
HIDDEN = "touch pwned #\x1b[2K\rgit status"
SHOWN = "touch pwned #\\x1b[2K\\rgit status"


def _static(screen: PermissionScreen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def _terminal_output(app: Any) -> str:
    update = app.screen._compositor.render_update(full=True)
    return str(update.render_segments(app.console))


async def test_a_hidden_command_is_shown_written_out_and_never_remembered(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    server = serve(
        Scenario.of(Turn([text("Checking."), tool_use("Bash", {"command": HIDDEN}, id="t1")]))
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(pilot, "status please")
        assert _static(screen, "#perm-command") == SHOWN
        assert _static(screen, "#perm-hidden") == WARNING
        # the title is the tool's one-line header: whitespace (\r too) is folded to spaces
        assert "touch pwned #\\x1b[2K\\rgit status" in _static(screen, "#perm-title")
        assert "control characters" in _static(screen, "#perm-why")
        options = _static(screen, "#perm-options")
        assert "don't ask again" not in options and "(a)" not in options
        assert [kind for kind, _ in screen._options] == ["yes", "no"]
        output = _terminal_output(app)
        assert "\x1b[2K" not in output and "\r" not in output  # not obeyed by the terminal
        assert SHOWN in output and WARNING in output
        await pilot.press("a")  # "always" is not offered: the key does nothing
        await pilot.pause(0.05)
        assert app.screen is screen
        await pilot.press("down", "down")  # two options: back on Yes, "always" never selected
        assert "❯ 1. Yes" in _static(screen, "#perm-options")
        header = app.query_one(ToolCall).header
        assert "touch pwned #\\x1b[2K\\rgit status" in header  # the conversation shows it too
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
    assert not (project / "pwned").exists()
    assert not (project / ".claude" / "settings.local.json").exists()
    server.assert_done()


async def test_suggestions_are_not_offered_for_a_hidden_command(
    session: FakeSession, make_app: Any
) -> None:
    """Whatever the verdict carries, a command with a bidi override or a NUL is not offered
    "don't ask again"; its invisible characters show as ``\\u202e`` / ``\\x00``."""
    command = "git status # \u202e\x00 dwp; touch pwned"
    prompt = bash_prompt(command, suggestions=("git status *",))
    session.turns = [[Ask(prompt), TurnFinished("end_turn", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        assert _static(screen, "#perm-command") == "git status # \\u202e\\x00 dwp; touch pwned"
        assert _static(screen, "#perm-hidden") == (
            "This command contains control characters or escape sequences, shown as \\xNN and "
            "invisible Unicode characters (bidi, zero-width), shown as \\uNNNN"
        )
        assert "don't ask again" not in _static(screen, "#perm-options")
        output = _terminal_output(app)
        assert "\u202e" not in output and "\x00" not in output
        await pilot.press("a")
        await pilot.pause(0.05)
        assert app.screen is screen
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running)
    [response] = session.responses
    assert response.answer is PermissionAnswer.ALLOW and response.rules == ()  # once, no rule


async def test_an_ordinary_command_keeps_its_options_and_no_warning(
    session: FakeSession, make_app: Any
) -> None:
    """The control: multi-line commands keep their newlines and tabs, and the rule offer."""
    prompt = bash_prompt("for f in *.py; do\n\techo $f\ndone", suggestions=("echo *",))
    session.turns = [[Ask(prompt), TurnFinished("end_turn", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        assert _static(screen, "#perm-command") == "for f in *.py; do\n\techo $f\ndone"
        assert not screen.query("#perm-hidden")
        assert "don't ask again" in _static(screen, "#perm-options")
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running)
    assert [r.answer for r in session.responses] == [PermissionAnswer.DENY]
