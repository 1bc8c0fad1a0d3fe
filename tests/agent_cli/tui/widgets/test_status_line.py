"""The ``statusLine`` setting over a real session: a real ``sh -c`` command gets the session
JSON on stdin and its first line shows above the default status line (issue 21 item 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Scenario, Turn, text
from agent_cli.tui.widgets.items import NoticeLine
from agent_cli.tui.widgets.status_line import display_name, parse_status_line
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import (  # noqa: F401  (fixtures)
    _app,
    project,
    serve,
)


def _user_settings(proj: Path, status_line: Any) -> None:
    settings = proj.parent / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"statusLine": status_line}))


def _recorder(proj: Path, out: str = "") -> tuple[str, Path]:
    """A command that appends its stdin as one line to a file, then prints ``out``."""
    log = proj.parent / "status-input.jsonl"
    return f"cat >> '{log}'; echo >> '{log}'; {out}", log


def _inputs(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _warnings(app: Any) -> list[str]:
    return [n.notice_text for n in app.query(NoticeLine) if "statusLine" in n.notice_text]


async def test_the_command_gets_the_session_and_its_first_line_shows(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    command, log = _recorder(project, r"printf '\033[31m%s\033[0m on duty\nsecond line\n' Nerve")
    _user_settings(project, {"type": "command", "command": command, "padding": 2})
    server = serve(Scenario.of(Turn([text("Hello.")])))
    app = _app(project, model="claude-sonnet-4-5-20250929")
    async with app.run_test(size=SIZE) as pilot:
        row = app.status_line
        await wait_for(pilot, lambda: row.line, timeout=15)
        assert row.line == "Nerve on duty" and row.display
        rendered = row.render()
        assert str(rendered) == "  Nerve on duty"  # the padding, then the first line only
        assert any("red" in str(span.style) for span in rendered.spans), rendered.spans
        assert "default mode" in str(app.status.render())  # the default line stays below
        assert row.region.y < app.status.region.y
        (first,) = _inputs(log)
        assert first["session_id"] == app.session.session_id
        assert first["cwd"] == str(project)
        assert first["workspace"] == {"current_dir": str(project), "project_dir": str(project)}
        assert first["model"] == {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"}
        assert first["transcript_path"].endswith(".jsonl") and first["version"]
        assert first["cost"]["total_cost_usd"] == 0.0
        # a turn changes the messages and the cost: the command runs again
        app.prompt_input.load_text("hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and len(_inputs(log)) >= 2, timeout=15)
        await wait_for(pilot, lambda: row.idle)
        runs = row.runs
        app.refresh_status()  # nothing changed since: no new run
        assert row.idle
        await pilot.pause(0.1)
        assert row.runs == runs
    assert _inputs(log)[-1]["cost"]["total_cost_usd"] > 0
    server.assert_done()


async def test_control_sequences_never_reach_the_terminal(project: Path) -> None:  # noqa: F811
    _user_settings(
        project, {"type": "command", "command": r"printf '\033]0;pwned\007\033[2J\033[1mok\033[0m'"}
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status_line.line, timeout=15)
        assert "\x1b" not in app.status_line.line and "\x07" not in app.status_line.line
        assert app.status_line.line.endswith("ok") and "pwned" not in app.status_line.line
        assert any("bold" in str(s.style) for s in app.status_line.render().spans)


async def test_a_failing_command_keeps_the_default_and_warns_once(
    project: Path,  # noqa: F811
) -> None:
    _user_settings(project, {"type": "command", "command": "echo broken >&2; exit 3"})
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status_line.runs >= 1, timeout=15)
        assert _warnings(app) == [
            "statusLine command exited with status 3: broken; showing the default status line."
        ]
        assert not app.status_line.display
        assert str(app.status.render()).startswith("default mode")
        app.session.set_mode("acceptEdits")  # its input changed: tried again, no second warning
        app.refresh_status()
        await wait_for(pilot, lambda: app.status_line.runs >= 2, timeout=15)
        assert len(_warnings(app)) == 1


async def test_a_hanging_command_is_stopped(project: Path) -> None:  # noqa: F811
    marker = project.parent / "still-running"
    _user_settings(project, {"type": "command", "command": f"sleep 30; touch '{marker}'"})
    app = _app(project)
    app.status_line.timeout_s = 0.5
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status_line.runs >= 1, timeout=15)
        (warning,) = _warnings(app)
        assert "gave no answer within 0.5 s and was stopped" in warning
        assert not app.status_line.display and "default mode" in str(app.status.render())
    assert not marker.exists()


async def test_changes_while_it_runs_make_one_more_run(project: Path) -> None:  # noqa: F811
    go = project.parent / "go"
    # each run waits (10 s at most) until the test lets it finish
    command, log = _recorder(
        project, f"for i in $(seq 200); do [ -e '{go}' ] && break; sleep 0.05; done; echo line"
    )
    _user_settings(project, {"type": "command", "command": command})
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: _inputs(log), timeout=15)  # the first run is under way
        for mode in ("acceptEdits", "plan", "default", "plan"):
            app.session.set_mode(mode)
            app.refresh_status()
        assert app.status_line.runs == 0
        go.touch()
        await wait_for(pilot, lambda: app.status_line.runs >= 2, timeout=15)
        await pilot.pause(0.2)
        assert app.status_line.runs == 2
        modes = [i["permission_mode"] for i in _inputs(log)]
        assert modes == ["default", "plan"]  # the changes coalesced into the latest input


async def test_an_untrusted_projects_status_line_does_not_run(
    project: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marker = project.parent / "ran"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"statusLine": {"type": "command", "command": f"touch '{marker}'; echo hi"}})
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        assert app.status_line.setting is None and app.status_line.runs == 0
    assert not marker.exists()
    monkeypatch.setenv("NERVE_TRUST_ALL", "1")
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status_line.line == "hi", timeout=15)
    assert marker.exists()


async def test_a_bad_setting_is_named(project: Path) -> None:  # noqa: F811
    _user_settings(project, {"type": "command", "command": "echo x", "padding": "wide"})
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: _warnings(app), timeout=15)
        assert _warnings(app) == [
            "statusLine.padding: expected a whole number 0-40, got 'wide'; not shown"
        ]
        assert app.status_line.setting is None


def test_parse_and_display_names() -> None:
    assert parse_status_line(None) == (None, None)
    assert parse_status_line({"type": "command", "command": "x"})[0] is not None
    assert parse_status_line({"type": "static", "command": "x"})[1] is not None
    assert parse_status_line({"type": "command", "command": "  "})[1] is not None
    assert parse_status_line("echo hi")[1] == "statusLine: expected an object, got str; not shown"
    assert display_name("claude-opus-4-6") == "Opus 4.6"
    assert display_name("claude-3-5-haiku-20241022") == "Haiku 3.5"
    assert display_name("claude-opus-4-20250514") == "Opus 4"
    assert display_name("my-model") == "my-model"
