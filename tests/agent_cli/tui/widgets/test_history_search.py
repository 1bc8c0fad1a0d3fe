"""Ctrl+R searches the prompt history backwards (issue 21: "Ctrl+R does nothing"): the query
shows in the input's border, the input the newest match; Ctrl+R again goes older; Enter or Tab
takes the match without sending it; Esc puts the draft back; the history is the per-project one
a new app reads from disk."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agent_cli.loop.events import TurnFinished
from agent_cli.tui.widgets.history_search import HistorySearch
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession

PROMPTS = ["git status please", "run the tests", "git log -5"]


async def _send(app: Any, pilot: Any, session: FakeSession, prompts: list[str]) -> None:
    for prompt in prompts:
        app.prompt_input.load_text(prompt)
        await pilot.press("enter")
        await wait_for(pilot, lambda p=prompt: session.prompts[-1:] == [p] and not app.turn_running)


@asynccontextmanager
async def _with_history(
    session: FakeSession, make_app: Any, extra_turns: int = 0
) -> AsyncIterator[tuple[Any, Any]]:
    """The app with ``PROMPTS`` sent (and ``extra_turns`` more scripted), running."""
    session.turns = [[TurnFinished("end_turn", 1)] for _ in range(len(PROMPTS) + extra_turns)]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(app, pilot, session, PROMPTS)
        yield app, pilot


def _title(app: Any) -> str:
    return str(app.prompt_input.border_title or "")


async def test_ctrl_r_finds_newest_first_steps_older_and_enter_takes_without_sending(
    session: FakeSession, make_app: Any
) -> None:
    async with _with_history(session, make_app, extra_turns=1) as (app, pilot):
        await pilot.press("ctrl+r", *"GIT")  # case-insensitive
        assert app.prompt_input.text == "git log -5"
        assert _title(app).startswith("search: GIT")
        await pilot.press("ctrl+r")
        assert app.prompt_input.text == "git status please"
        await pilot.press("ctrl+r")  # nothing older: the match stays, the border says so
        assert app.prompt_input.text == "git status please"
        assert _title(app).startswith("failing search: GIT")
        await pilot.press("enter")
        await pilot.pause(0.05)
        assert app.prompt_input.text == "git status please" and not _title(app)
        assert session.prompts == PROMPTS  # taken into the input, not sent
        await pilot.press("enter")  # the second Enter sends it
        await wait_for(pilot, lambda: session.prompts[-1] == "git status please")


async def test_esc_puts_the_draft_back_and_backspace_widens_the_query(
    session: FakeSession, make_app: Any
) -> None:
    async with _with_history(session, make_app) as (app, pilot):
        await pilot.press(*"my draft", "ctrl+r", *"tests")
        assert app.prompt_input.text == "run the tests"
        await pilot.press("x")  # "testsx" matches nothing: the last match stays
        assert _title(app).startswith("failing search: testsx")
        assert app.prompt_input.text == "run the tests"
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        assert _title(app).startswith("search: t")
        assert app.prompt_input.text == "git log -5"  # the newest prompt with a "t"
        await pilot.press("escape")
        await pilot.pause(0.05)
        assert app.prompt_input.text == "my draft" and not _title(app)
        assert app.is_running and session.prompts == PROMPTS


async def test_tab_takes_the_match_and_a_new_app_searches_the_saved_history(
    session: FakeSession, make_app: Any
) -> None:
    async with _with_history(session, make_app):
        pass
    again = make_app(FakeSession())  # the same project: the history file on disk
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+r", *"run")
        assert again.prompt_input.text == "run the tests"
        await pilot.press("tab")
        await pilot.pause(0.05)
        assert again.prompt_input.text == "run the tests" and not _title(again)


def test_duplicates_show_once_and_an_empty_query_shows_the_draft() -> None:
    search = HistorySearch(["make", "make", "make test"], draft="draft")
    assert search.shown() == "draft"
    search.type("make")
    assert search.match == "make"
    search.older()
    assert search.match == "make test"
    search.older()
    assert search.failed and search.match == "make test"
