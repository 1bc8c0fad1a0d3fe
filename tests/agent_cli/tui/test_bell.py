"""The terminal bell (issue 21 item 3): ``"preferredNotifChannel": "terminal_bell"`` rings it
when the app starts waiting for the user — a permission prompt, a finished turn — over a real
session; without the setting the app stays quiet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import (  # noqa: F401  (fixtures)
    _app,
    _ask,
    _touch_scenario,
    project,
    serve,
)


def _settings(proj: Path, data: dict[str, Any]) -> None:
    path = proj.parent / "home" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _counting_bell(app: Any) -> list[str]:
    """Record each ring with what the app was doing; the real bell still rings."""
    rings: list[str] = []
    real = app.bell

    def bell() -> None:
        rings.append("during the turn" if app.turn_running else "after the turn")
        real()

    app.bell = bell
    return rings


async def test_a_prompt_and_a_finished_turn_ring_the_bell(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    _settings(project, {"preferredNotifChannel": "terminal_bell"})
    server = serve(_touch_scenario("made.txt", "Created."))
    app = _app(project)
    rings = _counting_bell(app)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot, "make a file")
        assert rings == ["during the turn"]  # as the prompt starts waiting
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        await wait_for(pilot, lambda: len(rings) == 2)
        assert rings[1] == "after the turn"  # the app waits for the next prompt
    server.assert_done()


async def test_without_the_setting_the_app_is_quiet(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    _settings(project, {"preferredNotifChannel": "notifications_disabled"})
    server = serve(Scenario.of(Turn([text("Hello.")])))
    app = _app(project)
    rings = _counting_bell(app)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        await pilot.pause(0.1)
    assert rings == []
    server.assert_done()
