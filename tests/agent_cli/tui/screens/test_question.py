"""AskUserQuestion's modal under Pilot: single and multi-select, free text, back, decline, the
keystroke guard; then through the real session, and WebFetch's "allow this domain" prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.screens.question import QuestionScreen
from agent_cli.tui.widgets.items import ToolCall
from agent_cli.tui.widgets.markdown import AssistantMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve
from tests.tools.builtin.web_support import PageServer
from tools.questions import Question, QuestionOption, QuestionPrompt, QuestionResponse

__all__ = ["project", "serve"]  # fixtures shared with the real-session tests

DB = Question(
    "Which database?",
    "DB",
    (QuestionOption("Postgres", "the server one"), QuestionOption("SQLite", "a file")),
)
FEATURES = Question(
    "Which features?",
    "Features",
    (QuestionOption("Search"), QuestionOption("Export"), QuestionOption("Sync")),
    multi_select=True,
)


class Host(App[None]):
    """Shows one QuestionScreen and keeps what it was dismissed with."""

    def __init__(self, prompt: QuestionPrompt, guard_s: float = 0.0) -> None:
        super().__init__()
        self.prompt = prompt
        self.guard_s = guard_s
        self.results: list[QuestionResponse | None] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(QuestionScreen(self.prompt, guard_s=self.guard_s), self.results.append)


async def _answer(prompt: QuestionPrompt, *keys: str, guard_s: float = 0.0) -> Host:
    app = Host(prompt, guard_s)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, QuestionScreen))
        for key in keys:
            await pilot.press(key)
        await pilot.pause()
    return app


def _shown(screen: Any) -> str:
    return "\n".join(str(s.render()) for s in screen.query(Static))


async def test_single_select_with_arrows_and_enter() -> None:
    app = await _answer(QuestionPrompt((DB,)), "down", "enter")
    assert app.results == [QuestionResponse(answers={"Which database?": "SQLite"})]


async def test_digits_pick_directly() -> None:
    app = await _answer(QuestionPrompt((DB,)), "1")
    assert app.results == [QuestionResponse(answers={"Which database?": "Postgres"})]


async def test_multi_select_ticks_with_space_and_confirms_with_enter() -> None:
    app = await _answer(QuestionPrompt((FEATURES,)), "space", "down", "down", "space", "enter")
    assert app.results == [QuestionResponse(answers={"Which features?": "Search, Sync"})]


async def test_other_takes_free_text() -> None:
    app = await _answer(QuestionPrompt((DB,)), "3", *"Redis", "enter")
    assert app.results == [QuestionResponse(answers={"Which database?": "Redis"})]


async def test_escape_in_the_text_field_goes_back_to_the_options() -> None:
    app = await _answer(QuestionPrompt((DB,)), "3", "x", "escape", "2")
    assert app.results == [QuestionResponse(answers={"Which database?": "SQLite"})]


async def test_several_questions_in_order_and_back() -> None:
    prompt = QuestionPrompt((DB, FEATURES))
    app = await _answer(prompt, "1", "left", "2", "3", "space", "enter")
    assert app.results == [
        QuestionResponse(answers={"Which database?": "SQLite", "Which features?": "Sync"})
    ]


async def test_escape_declines() -> None:
    app = await _answer(QuestionPrompt((DB, FEATURES)), "1", "escape")
    assert app.results == [QuestionResponse(declined=True)]


async def test_keys_during_the_guard_are_ignored() -> None:
    app = Host(QuestionPrompt((DB,)), guard_s=60.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, QuestionScreen))
        await pilot.press("1", "enter", "escape")
        screen = app.screen
        assert isinstance(screen, QuestionScreen) and screen.ignored_keys == 3
        shown = _shown(screen)
        assert "[DB]" in shown and "Which database?" in shown and "the server one" in shown
        assert "3. Other (type your answer)" in shown
    assert app.results == []  # never answered


# -- through the real session ------------------------------------------------------------


async def test_the_model_asks_and_the_answer_reaches_it(project: Path, serve: Any) -> None:
    question = {
        "question": "Which database?",
        "header": "DB",
        "options": [{"label": "Postgres"}, {"label": "SQLite"}],
        "multiSelect": False,
    }
    server = serve(
        Scenario.of(
            Turn([tool_use("AskUserQuestion", {"questions": [question]}, id="q1")]),
            Turn(
                [text("SQLite it is.")],
                match=Match(tool_result_for="q1", contains_text='"Which database?"="SQLite"'),
            ),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("set up storage")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, QuestionScreen), timeout=15)
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert app.query(AssistantMessage).last().source == "SQLite it is."
        tool = app.query_one(ToolCall)
        assert not tool.is_error and "SQLite" in tool.result_text
    server.assert_done()


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with PageServer() as server:
        yield server


async def test_webfetch_prompt_offers_to_allow_the_domain(
    project: Path, serve: Any, pages: PageServer
) -> None:
    url = pages.url("/page")
    server = serve(
        Scenario.of(
            Turn([tool_use("WebFetch", {"url": url, "prompt": "install?"}, id="f1")]),
            Turn([text("pip install nerve")]),  # the fast model's answer
            Turn([text("Use pip.")], match=Match(tool_result_for="f1", contains_text="pip")),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("how do I install nerve?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), timeout=15)
        shown = _shown(app.screen)
        assert "Domain: 127.0.0.1" in shown
        assert (
            "Yes, and don't ask again for 127.0.0.1  (a)\n"
            "     saves WebFetch(domain:127.0.0.1) to .claude/settings.local.json"
        ) in shown
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert app.query(AssistantMessage).last().source == "Use pip."
    saved = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["WebFetch(domain:127.0.0.1)"]
    assert server.requests[1].body["model"] == "claude-haiku-4-5"
    server.assert_done()
