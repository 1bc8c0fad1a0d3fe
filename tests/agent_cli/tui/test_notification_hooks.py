"""Notification hooks from the app over a real session (issue 12 item 2): a real command hook
writes the JSON it gets on stdin to a file, per notification type (the group's matcher)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.session.notification import IDLE_ENV
from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import (  # noqa: F401  (fixtures)
    _app,
    _ask,
    _touch_scenario,
    project,
    serve,
)


def _hooks(proj: Path) -> dict[str, Path]:
    """One Notification group per type, each appending its stdin as a line to its own file."""
    out = {kind: proj.parent / f"{kind}.jsonl" for kind in ("permission_prompt", "idle_prompt")}
    groups = [
        {"matcher": kind, "hooks": [{"type": "command", "command": f"cat >> '{p}'; echo >> '{p}'"}]}
        for kind, p in out.items()
    ]
    settings = proj.parent / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"hooks": {"Notification": groups}}))
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_a_waiting_permission_prompt_fires_notification(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    files = _hooks(project)
    server = serve(_touch_scenario("made.txt", "Created."))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot, "make a file")
        await wait_for(pilot, lambda: _lines(files["permission_prompt"]), timeout=15)
        (note,) = _lines(files["permission_prompt"])
        assert note["hook_event_name"] == "Notification"
        assert note["notification_type"] == "permission_prompt"
        assert note["message"] == "Nerve needs your permission to use Bash"
        assert note["title"] == "Nerve" and note["session_id"] and note["cwd"] == str(project)
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert (project / "made.txt").exists()
    assert _lines(files["idle_prompt"]) == []  # the other type's group did not run
    server.assert_done()


async def test_waiting_for_input_past_the_threshold_fires_idle_prompt(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(IDLE_ENV, "0.3")
    files = _hooks(project)
    server = serve(Scenario.of(Turn([text("Hello.")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        await wait_for(pilot, lambda: _lines(files["idle_prompt"]), timeout=15)
        (note,) = _lines(files["idle_prompt"])
        assert note["notification_type"] == "idle_prompt"
        assert note["message"] == "Nerve is waiting for your input"
    assert _lines(files["permission_prompt"]) == []
    server.assert_done()


def test_the_idle_threshold_comes_from_the_environment() -> None:
    from agent_cli.session.notification import DEFAULT_IDLE_S, idle_delay

    assert idle_delay({}) == DEFAULT_IDLE_S == 60.0
    assert idle_delay({IDLE_ENV: "2.5"}) == 2.5
    assert idle_delay({IDLE_ENV: "soon"}) == idle_delay({IDLE_ENV: "-1"}) == DEFAULT_IDLE_S
