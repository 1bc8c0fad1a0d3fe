"""Live progress in the app: the working line while the model works, retries with a countdown.

Pilot over the REAL AgentSession and the scripted server (real HTTP + SSE); the working line's
text is a pure function of the clock, checked with explicit times.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Scenario, Turn, text
from agent_cli.testing.scenario import Fault
from agent_cli.tui.turns import INTERRUPTED
from agent_cli.tui.widgets.items import NoticeLine
from agent_cli.tui.widgets.spinner import RetryState, WorkingState, working_text
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve

__all__ = ["project", "serve"]  # fixtures shared with the real-session tests


def test_working_text_counts_time_and_tokens() -> None:
    state = WorkingState(started=100.0)
    assert working_text(state, 100.0).endswith("Working… (0s · esc to interrupt)")
    state.chars = 4 * 340
    assert working_text(state, 112.5).endswith("Working… (12s · ↓ 340 tokens · esc to interrupt)")
    state.chars = 4 * 1500
    assert "↓ 1.5k tokens" in working_text(state, 175.0)
    assert "(1m 15s ·" in working_text(state, 175.0)


def test_working_text_counts_down_to_the_next_attempt() -> None:
    state = WorkingState(started=0.0)
    state.retry = RetryState(2, 11, "overloaded (529)", "http://h:1/v1/messages", next_at=10.0)
    line = working_text(state, 6.2)
    assert "Retrying http://h:1/v1/messages in 4s (attempt 3/11) · overloaded (529)" in line
    assert line.endswith("esc to interrupt")
    assert "Retrying http://h:1/v1/messages now (attempt 3/11)" in working_text(state, 10.5)


async def test_a_tick_of_the_working_line_repaints_without_a_re_layout() -> None:
    # one line high: a re-layout per tick would repaint the whole conversation as it streams
    from textual.app import App, ComposeResult

    from agent_cli.tui.widgets.spinner import WorkingLine

    calls: list[dict[str, Any]] = []

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield WorkingLine()

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        line = app.query_one(WorkingLine)
        line.start()
        await pilot.pause()
        original = line.refresh

        def refresh(*args: Any, **kwargs: Any) -> Any:
            calls.append(kwargs)
            return original(*args, **kwargs)

        line.refresh = refresh  # type: ignore[method-assign]
        line.tick()
        assert calls and not any(c.get("layout") for c in calls)
        assert "Working…" in line.text


def _notices(app: Any) -> list[str]:
    return [n.notice_text for n in app.query(NoticeLine)]


async def test_working_line_while_the_model_streams(project: Path, serve: Any) -> None:
    # The answer is held after its first block: the turn is running, tokens have streamed.
    server = serve(
        Scenario.of(Turn([text("Thinking about it " * 20), text("done")], holds={0: "g"}))
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.working.display
        app.prompt_input.load_text("hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "tokens" in app.working.text, timeout=15)
        assert app.working.display
        line = app.working.text
        assert "Working… (" in line and "esc to interrupt" in line, line
        assert re.search(r"↓ \d+ tokens", line), line
        server.gate("g").set()
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert not app.working.display and app.working.text == ""
    server.assert_done()


async def test_overloaded_shows_endpoint_reason_and_countdown(project: Path, serve: Any) -> None:
    busy = Fault("http", 529, "overloaded_error", "Overloaded", retry_after="30")
    server = serve(Scenario.of(Turn([text("never")], faults=[busy])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Retrying" in app.working.text, timeout=15)
        line = app.working.text
        assert f"Retrying {server.base_url}/v1/messages in " in line, line
        assert re.search(r" in [1-3]\ds \(attempt 2/\d+\)", line), line
        assert "529" in line or "verloaded" in line, line
        assert any(server.base_url in n for n in _notices(app)), _notices(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert not app.working.display
        notices = _notices(app)
        assert [n for n in notices if n.startswith("Interrupted")] == [INTERRUPTED], notices
        assert "Interrupted by user." not in notices, notices


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_unreachable_endpoint_is_named_then_one_interrupted_line(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Retrying" in app.working.text, timeout=15)
        line = app.working.text
        assert f"Retrying {url}/v1/messages " in line and "connect" in line, line
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        notices = _notices(app)
        assert [n for n in notices if n.startswith("Interrupted")] == [INTERRUPTED], notices
        assert "Interrupted by user." not in notices, notices
        assert not app.working.display
