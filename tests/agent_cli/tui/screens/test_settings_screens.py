"""``/config`` and the interactive ``/permissions`` over a real session (issue 21 item 5): the
settings with their files, changes written to the real files, rules in force at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.bell import bell_wanted
from agent_cli.tui.screens.config import ConfigScreen
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.screens.permissions import PermissionsScreen, parse_rule_line
from agent_cli.tui.widgets.items import ToolCall
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import (  # noqa: F401  (fixtures)
    _app,
    _touch_scenario,
    project,
    serve,
)


def _user_file(proj: Path) -> Path:
    return proj.parent / "home" / ".claude" / "settings.json"


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


async def _slash(pilot: Any, command: str) -> None:
    pilot.app.prompt_input.load_text(command)
    pilot.app.prompt_input.completion_list.hide()
    await pilot.press("enter")


async def _open(pilot: Any, command: str, kind: type) -> Any:
    await _slash(pilot, command)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, kind))
    await pilot.pause()
    return pilot.app.screen


async def test_config_lists_sources_and_saves_changes(
    project: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NERVE_TRUST_ALL", "1")
    user = _user_file(project)
    _write(user, {"preferredNotifChannel": "notifications_disabled", "cleanupPeriodDays": 9})
    _write(project / ".claude" / "settings.json", {"permissions": {"defaultMode": "plan"}})
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, "/config", ConfigScreen)
        rows = str(screen.query_one("#config-rows").render())
        shared = f"{project}/.claude/settings.json"
        assert f'permissions.defaultMode = "plan"  ({shared})' in rows
        assert 'preferredNotifChannel = "notifications_disabled"  (~/.claude/settings.json)' in rows
        assert "cleanupPeriodDays = 9  (~/.claude/settings.json)" in rows
        assert screen.toggle_labels() == [
            f'Default permission mode: "plan"  (from {shared})',
            'Notifications (terminal bell): "notifications_disabled"  (from ~/.claude/settings.json)',
            "Extended thinking: false  (not set)",
            'Theme: "dark"  (not set)',
            "Verbose (every tool result whole): false  (not set)",
        ]
        assert not bell_wanted(app.session)
        await pilot.press("down", "enter")  # the bell: on, and at once
        await pilot.pause()
        assert json.loads(user.read_text()) == {
            "preferredNotifChannel": "terminal_bell",
            "cleanupPeriodDays": 9,
        }
        assert screen.message.endswith("it applies now.") and bell_wanted(app.session)
        await pilot.press("up", "enter")  # the mode: saved, but the project file still wins
        await pilot.pause()
        assert json.loads(user.read_text())["permissions"] == {"defaultMode": "dontAsk"}
        assert screen.message.endswith(f"but {shared} sets it and wins.")
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert json.loads(user.read_text())["alwaysThinkingEnabled"] is True
        assert screen.message.endswith("it applies from the next session.")
        assert screen.toggle_labels()[2] == "Extended thinking: true  (saved to user settings)"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfigScreen))


async def test_config_refuses_a_broken_user_file(project: Path) -> None:  # noqa: F811
    user = _user_file(project)
    user.parent.mkdir(parents=True)
    user.write_text('{"model": "x",,}')
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, "/config", ConfigScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.message.startswith("Not saved: ") and "invalid JSON" in screen.message
        assert "it was not changed" in screen.message
    assert user.read_text() == '{"model": "x",,}'


async def test_deleting_a_user_rule_takes_effect_at_once(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    user = _user_file(project)
    _write(user, {"permissions": {"allow": ["Bash(touch a.txt)", "Read"]}, "model": "m"})
    server = serve(_touch_scenario("a.txt", "Done."))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, "/permissions", PermissionsScreen)
        assert screen.lines()[:2] == [
            "allow  Bash(touch a.txt)  (userSettings: ~/.claude/settings.json)",
            "allow  Read  (userSettings: ~/.claude/settings.json)",
        ]
        await pilot.press("d")  # the highlighted (first) rule
        await pilot.pause()
        assert screen.message == "Deleted allow rule Bash(touch a.txt) from userSettings."
        assert json.loads(user.read_text()) == {"permissions": {"allow": ["Read"]}, "model": "m"}
        assert all("touch a.txt" not in line for line in screen.lines())
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionsScreen))
        await _slash(pilot, "make a.txt")
        # no rule allows it any more: the call asks
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), timeout=15)
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
    assert (project / "a.txt").exists()
    server.assert_done()


async def test_an_added_deny_rule_applies_to_the_next_call(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch b.txt"}, id="t1")]),
        Turn([text("Denied, fine.")], match=Match(tool_result_for="t1")),
    )
    server = serve(scenario)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, "/permissions", PermissionsScreen)
        assert screen.lines() == ["No permission rules."]
        await pilot.press("a")
        field = screen.query_one("#rule-input")
        assert field.has_focus
        field.value = "deny Bash(touch b.txt"  # unbalanced: refused, the text stays
        await pilot.press("enter")
        await pilot.pause()
        assert screen.message.startswith("Not added: bad rule 'Bash(touch b.txt'")
        assert field.value == "deny Bash(touch b.txt"
        field.value = "deny Bash(touch b.txt) @user"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.message == "Added deny rule Bash(touch b.txt) to userSettings."
        assert screen.lines() == [
            "deny   Bash(touch b.txt)  (userSettings: ~/.claude/settings.json)"
        ]
        saved = json.loads(_user_file(project).read_text())
        assert saved == {"permissions": {"deny": ["Bash(touch b.txt)"]}}
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionsScreen))
        await _slash(pilot, "make b.txt")
        await wait_for(pilot, lambda: not app.turn_running and app.query(ToolCall), timeout=15)
        assert not isinstance(app.screen, PermissionScreen)  # denied without asking
        assert app.query_one(ToolCall).is_error
    assert not (project / "b.txt").exists()
    server.assert_done()


async def test_a_policy_rule_cannot_be_deleted(project: Path) -> None:  # noqa: F811
    policy = project.parent / "policy" / "managed-settings.json"
    _write(policy, {"permissions": {"deny": ["WebFetch"]}})
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, "/permissions", PermissionsScreen)
        assert screen.lines() == [f"deny   WebFetch  (policySettings: {policy})"]
        await pilot.press("d")
        await pilot.pause()
        assert screen.message.startswith("Could not delete deny rule WebFetch: ")
        assert "editing that file" in screen.message
        assert json.loads(policy.read_text()) == {"permissions": {"deny": ["WebFetch"]}}
        assert [r.rule for r in app.session.rules()] == ["WebFetch"]


def test_rule_lines_parse() -> None:
    assert parse_rule_line("allow Bash(npm test *)") == (
        "allow",
        "Bash(npm test *)",
        "localSettings",
    )
    assert parse_rule_line("ask Edit @project") == ("ask", "Edit", "projectSettings")
    with pytest.raises(ValueError, match="expected allow, ask or deny"):
        parse_rule_line("Bash(ls)")
    with pytest.raises(ValueError, match="unknown file '@home'"):
        parse_rule_line("deny Read @home")


async def test_theme_and_verbose_apply_at_start_and_at_once(project: Path) -> None:  # noqa: F811
    user = _user_file(project)
    _write(user, {"theme": "light", "verbose": True})
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "textual-light" and app.transcript_full
        screen = await _open(pilot, "/config", ConfigScreen)
        await pilot.press("down", "down", "down", "enter")  # light -> dark-ansi
        await pilot.pause()
        assert app.theme == "ansi-dark" and screen.message.endswith("it applies now.")
        await pilot.press("down", "enter")  # verbose off
        await pilot.pause()
        assert not app.transcript_full
    assert json.loads(user.read_text()) == {"theme": "dark-ansi", "verbose": False}
