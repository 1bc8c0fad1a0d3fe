"""Input keys under Pilot: Ctrl+D/Ctrl+C with and without a draft, newlines, stale slash menu."""

from __future__ import annotations

from typing import Any

from agent_cli.loop.events import TurnFinished
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession


def last_notice(app: Any) -> str:
    return str(app.query(NoticeLine).last().notice_text)


async def test_ctrl_d_with_a_draft_keeps_app_and_draft(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"my draft")
        await pilot.press("ctrl+d", "ctrl+d", "ctrl+d")
        await pilot.pause(0.05)
        assert app.is_running and app.prompt_input.text == "my draft"
        await pilot.press("ctrl+c")  # clears the draft, does not exit
        await pilot.pause(0.05)
        assert app.is_running and app.prompt_input.text == ""
        await pilot.press("ctrl+d", "ctrl+d")  # empty now: exits
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_ctrl_c_twice_on_empty_input_exits(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause(0.05)
        assert app.is_running
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and session.closed


async def test_backslash_enter_and_shift_enter_insert_newlines(
    session: FakeSession, make_app: Any
) -> None:
    session.turns = [[TurnFinished("end_turn", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"one\\", "enter", *"two", "shift+enter", *"three")
        assert app.prompt_input.text == "one\ntwo\nthree"
        assert session.prompts == []
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.prompts == ["one\ntwo\nthree"])


async def test_enter_runs_what_the_input_says_not_a_stale_menu_item(
    session: FakeSession, make_app: Any
) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/")
        await pilot.pause(0.05)
        stale_items = list(app.completion_list.items)
        stale = app.completion_list.current()
        assert stale is not None and stale.value != "/cost "
        # Keys faster than the menu refreshes: the text says /cost, the list is still the one
        # shown for "/" (as when Enter is read before the refresh for the letters has run).
        app.prompt_input.insert("cost")
        await pilot.pause(0.05)
        app.completion_list.show_items(stale_items)
        assert app.completion_list.current() == stale
        await pilot.press("enter")
        await pilot.pause(0.05)
        assert session.clears == 0
        assert last_notice(app).startswith("Input 1.2k tokens")  # /cost ran


async def test_a_full_command_name_runs_that_command(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/mode")  # /mode and /model both match; /mode is what it says
        assert [c.value for c in app.completion_list.items] == ["/mode ", "/model "]
        await pilot.press("enter")
        await pilot.pause(0.05)
        assert last_notice(app) == "Permission mode: default (default mode)"
        # Moving the highlight is a choice: Enter then takes the highlighted item.
        await pilot.press(*"/mode", "down", "enter")
        await pilot.pause(0.05)
        from agent_cli.tui.screens.picker import ChoiceScreen

        assert isinstance(app.screen, ChoiceScreen)  # /model ran: its picker is up
        assert app.screen.title_text.startswith("Model")
