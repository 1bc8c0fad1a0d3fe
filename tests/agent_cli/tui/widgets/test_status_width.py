"""The default status line at narrow widths (issue 21): parts go in a fixed order, never the mode."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.tui.labels import DROP_ORDER, fit_status, status_parts
from tests.agent_cli.tui.fakes import FakeSession

USAGE = {"context_tokens": 12_300, "cost_usd": 1.25}


def _status(app: Any) -> str:
    return str(app.status.render())


@pytest.mark.parametrize(
    ("width", "expected"),
    [
        (100, "⏵⏵ accept edits on (shift+tab to cycle) · claude-test · ctx 12.3k · $1.25"),
        # 60 columns: the hint goes first; the cost stays (the complaint)
        (60, "⏵⏵ accept edits on · claude-test · ctx 12.3k · $1.25"),
        # 40 columns: then the context, then the model; the mode and the cost stay
        (40, "⏵⏵ accept edits on · $1.25"),
        (20, "⏵⏵ accept edits on"),
        (12, "⏵⏵ accept…"),
    ],
)
async def test_parts_drop_in_order_and_the_mode_stays(
    session: FakeSession, make_app: Any, width: int, expected: str
) -> None:
    session.usage = dict(USAGE)
    session.set_mode("acceptEdits")
    app = make_app(session)
    async with app.run_test(size=(width, 20)) as pilot:
        await pilot.pause()
        assert _status(app) == expected
        assert app.status.content_size.width == width - 2  # the line's padding


async def test_resizing_refits_the_line(session: FakeSession, make_app: Any) -> None:
    session.usage = dict(USAGE)
    app = make_app(session)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        assert "ctx 12.3k" in _status(app)
        await pilot.resize_terminal(40, 20)
        await pilot.pause()
        assert _status(app).startswith("default mode") and "ctx" not in _status(app)
        await pilot.resize_terminal(100, 20)
        await pilot.pause()
        assert "ctx 12.3k" in _status(app) and "(shift+tab to cycle)" in _status(app)


def test_background_tasks_go_before_the_cost() -> None:
    parts = status_parts("plan", "claude-x", USAGE, 2)
    full = fit_status(parts, None)
    assert (
        full
        == "⏸ plan mode on (shift+tab to cycle) · claude-x · ctx 12.3k · $1.25 · 2 background tasks"
    )
    assert fit_status(parts, 50) == "⏸ plan mode on · $1.25 · 2 background tasks"
    assert fit_status(parts, 24) == "⏸ plan mode on · $1.25"
    assert fit_status(parts, 8) == "⏸ plan …"
    assert DROP_ORDER.index("tasks") < DROP_ORDER.index("cost")
