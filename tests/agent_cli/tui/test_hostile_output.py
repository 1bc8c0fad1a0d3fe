"""Hostile text in every place the app shows foreign text: what the app would write to the
terminal (the compositor's full update, byte for byte) carries none of its control sequences,
and none of it is parsed as markup."""

from __future__ import annotations

from typing import Any

from agent_cli.loop.events import (
    ErrorEvent,
    Notice,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnFinished,
)
from agent_cli.tui.screens.permission import PermissionScreen
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import Ask, FakeSession, bash_prompt
from tools.terminal_text import neutralize, reveal

CLIP = "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: set the clipboard to "pwned"
TITLE = "\x1b]2;HACKED\x1b\\"  # OSC 2 ended by ST
CLEAR = "\x1b[2J\x1b[H"
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
DCS = "\x1bPq#0;2;0;0;0\x1b\\"
# What none of the hostile text may leave in the terminal output.
NEVER = ("\x1b]", "\x1bP", "\x07", "\x1b[2J", "cHduZWQ", "HACKED", "evil.example", "\x9b")
# A command (and a call's header) is shown written out, its payload visible as text (issue 32,
# item 5): only the sequences themselves must never reach the terminal.
SEQUENCES = ("\x1b]", "\x1bP", "\x07", "\x1b[2J", "\x9b")


def _terminal_output(app: Any) -> str:
    update = app.screen._compositor.render_update(full=True)
    return str(update.render_segments(app.console))


def _assert_clean(output: str, needles: tuple[str, ...] = NEVER) -> None:
    for needle in needles:
        assert needle not in output, f"{needle!r} reached the terminal"


async def test_events_with_control_sequences_render_inert(
    session: FakeSession, make_app: Any
) -> None:
    session.turns = [
        [
            TextDelta("Model says \x1b]2;MOD"),  # split across deltas
            TextDelta(f"EL\x07hi {CLIP}[bold]not markup[/bold]"),
            ToolStarted("t1", "Bash", {"command": "x"}, f"Bash(echo {TITLE}x)"),
            ToolProgress("t1", None, f"{CLEAR}working {DCS}"),
            ToolFinished("t1", "Bash", f"\x1b[31mred\x1b[0m {CLIP}\x1b[8mhidden\x1b[0m", False),
            Notice(f"hook says {LINK} [red]x[/red]", "warning"),
            ErrorEvent(f"server said {TITLE}\x9b2J"),
            TurnFinished("end_turn", 1),
        ]
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: not app.turn_running)
        await pilot.pause(0.05)
        output = _terminal_output(app)
        header = f"Bash(echo {reveal(TITLE)}x)"  # the header is written out, not tidied
        assert header in output
        _assert_clean(output.replace(header, ""))
        for shown in (
            "Model says hi [bold]not markup[/bold]",
            "red hidden",
            "hook says click [red]x[/red]",
        ):
            assert shown in neutralize(output), shown  # the text itself is all there


async def test_the_permission_prompt_shows_a_hostile_command_inert(
    session: FakeSession, make_app: Any
) -> None:
    command = f"ls {CLEAR}{TITLE}&& rm -rf ~ {CLIP}"
    session.turns = [[Ask(bash_prompt(command, preview=f"+{CLIP}line")), TurnFinished("x", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.pause(0.05)
        output = _terminal_output(app)
        _assert_clean(output, SEQUENCES)
        assert "rm -rf ~" in output  # what will run is shown, not hidden by the sequences
        assert "\\x1b]52;c;cHduZWQ=\\x07" in output  # with its sequences written out
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running)


async def test_the_question_modal_shows_hostile_text_inert() -> None:
    from tests.agent_cli.tui.screens.test_question import Host
    from tools.questions import Question, QuestionOption, QuestionPrompt

    hostile = Question(
        f"Which one? {CLIP}{CLEAR}",
        f"H{TITLE}",
        (QuestionOption(f"first {LINK}", f"about it {DCS}"), QuestionOption("second")),
    )
    app = Host(QuestionPrompt((hostile,)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: type(app.screen).__name__ == "QuestionScreen")
        await pilot.pause(0.05)
        output = _terminal_output(app)
        _assert_clean(output)
        for shown in ("Which one?", "first click", "about it"):
            assert shown in neutralize(output), shown
