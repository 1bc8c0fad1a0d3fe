"""The permission modal under Pilot: yes, always, no with feedback, and the keystroke guard."""

from __future__ import annotations

import time
from typing import Any

from textual.events import Key

from agent_cli.loop.events import TextDelta, TurnFinished
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.turns import INTERRUPTED
from agent_cli.tui.widgets.items import NoticeLine, ToolCall
from agent_cli.tui.widgets.markdown import AssistantMessage
from permissions.types import RuleValue
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import Ask, FakeSession, ask_rule, bash_prompt
from tools.context import PermissionAnswer


def _texts(app: Any, kind: type) -> list[str]:
    out = []
    for w in app.query(kind):
        if isinstance(w, NoticeLine):
            out.append(w.notice_text)
        elif isinstance(w, ToolCall):
            out.append(f"{w.header}|{w.result_text}")
        elif isinstance(w, AssistantMessage):
            out.append(w.source)
    return out


def _burst(app: Any, keys: str) -> None:
    """Queue key events the way a terminal read of several bytes does: all at once, before the
    app handles the first (Pilot's press waits for idle after each key)."""
    for key in keys:
        name = {"\t": "tab", " ": "space"}.get(key, key)
        app._driver.send_message(Key(name, None if key == "\t" else key))


async def _send(pilot: Any, text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


async def test_yes_runs_tool_and_shows_result(session: FakeSession, make_app: Any) -> None:
    prompt = bash_prompt("rm -rf build", reason="rm deletes files", rule=ask_rule("rm *"))
    session.turns = [
        [
            TextDelta("Cleaning "),
            TextDelta("up."),
            Ask(prompt, "removed 3 files"),
            TurnFinished("end_turn", 1),
        ]
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "clean")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        shown = " ".join(str(s.render()) for s in screen.query("Static"))
        assert "rm -rf build" in shown
        assert "rm deletes files" in shown
        assert "ask Bash(rm *) (from projectSettings)" in shown
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running)
        assert session.responses[0].answer is PermissionAnswer.ALLOW
        assert "Bash(rm -rf build)|removed 3 files" in _texts(app, ToolCall)
        assert "Cleaning up." in _texts(app, AssistantMessage)
        assert session.prompts == ["clean"]


async def test_enter_is_yes(session: FakeSession, make_app: Any) -> None:
    session.turns = [[Ask(bash_prompt("make"))]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "build it")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running)
        assert session.responses[0].answer is PermissionAnswer.ALLOW


async def test_always_returns_suggested_rules(session: FakeSession, make_app: Any) -> None:
    prompt = bash_prompt("npm test -- --watch=false", suggestions=("npm test *",))
    session.turns = [[Ask(prompt)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "test")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        options = str(app.screen.query_one("#perm-options").render())
        assert (
            "Yes, and don't ask again for `npm test` commands  (a)\n"
            "     saves Bash(npm test *) to .claude/settings.local.json"
        ) in options
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.turn_running)
        response = session.responses[0]
        assert response.answer is PermissionAnswer.ALLOW_ALWAYS
        assert response.rules == (RuleValue("Bash", "npm test *"),)
        assert "Saved rule Bash(npm test *) to .claude/settings.local.json" in _texts(
            app, NoticeLine
        )


async def test_always_is_not_offered_without_suggestions(
    session: FakeSession, make_app: Any
) -> None:
    session.turns = [[Ask(bash_prompt("curl example.com | sh"))]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        assert "don't ask again" not in str(app.screen.query_one("#perm-options").render())
        await pilot.press("a")  # not an option here: ignored
        await pilot.pause(0.05)
        assert isinstance(app.screen, PermissionScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running)
        assert session.responses[0].answer is PermissionAnswer.DENY
        assert session.responses[0].feedback is None


async def test_escape_denies_and_ends_the_turn(session: FakeSession, make_app: Any) -> None:
    session.turns = [[Ask(bash_prompt("git push --force")), TextDelta("never shown")]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "push")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running)
        assert session.responses[0].answer is PermissionAnswer.DENY
        assert session.aborts == 1  # a plain rejection ends the turn
        assert _texts(app, NoticeLine).count(INTERRUPTED) == 1
        assert "never shown" not in " ".join(_texts(app, AssistantMessage))
        assert "Bash(git push --force)|Rejected" in _texts(app, ToolCall)
        assert app.focused is app.prompt_input  # back at the input


async def test_no_ends_the_turn(session: FakeSession, make_app: Any) -> None:
    session.turns = [[Ask(bash_prompt("git push --force")), TextDelta("never shown")]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "push")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running)
        assert session.aborts == 1
        assert _texts(app, NoticeLine).count(INTERRUPTED) == 1


async def test_deny_with_feedback(session: FakeSession, make_app: Any) -> None:
    session.turns = [[Ask(bash_prompt("rm -rf node_modules"))]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "reset deps")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("tab")
        await pilot.press(*"use npm ci instead")  # contains y, n and a: typed, not answers
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running)
        response = session.responses[0]
        assert response.answer is PermissionAnswer.DENY
        assert response.feedback == "use npm ci instead"
        assert "Bash(rm -rf node_modules)|Rejected: use npm ci instead" in _texts(app, ToolCall)
        assert session.aborts == 0 and INTERRUPTED not in _texts(app, NoticeLine)


async def test_feedback_typed_in_one_burst_after_tab(session: FakeSession, make_app: Any) -> None:
    """Tab and the feedback arrive in one read: the letters go to the field (the first, n,
    is not the No key), so the turn goes on with the feedback."""
    session.turns = [[Ask(bash_prompt("touch b.txt"))]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "make b")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        _burst(app, "\tname it c.txt")
        field = app.screen.query_one("#perm-feedback")
        await wait_for(pilot, lambda: field.value == "name it c.txt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running)
        response = session.responses[0]
        assert response.answer is PermissionAnswer.DENY
        assert response.feedback == "name it c.txt"
        assert session.aborts == 0


async def test_preview_and_safety_are_shown(session: FakeSession, make_app: Any) -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old = 1\n+new = 2\n"
    prompt = bash_prompt("sed -i s/old/new/ x.py", preview=diff, safety="edits .git/config")
    session.turns = [[Ask(prompt)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "rename")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        assert "+new = 2" in str(app.screen.query_one("#perm-preview").render())
        assert "Safety check: edits .git/config" in str(app.screen.query_one("#perm-why").render())
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running)


async def test_keys_during_guard_are_ignored(session: FakeSession, make_app: Any) -> None:
    session.turns = [[Ask(bash_prompt("rm -rf /tmp/x"))]]
    app = make_app(session, guard_s=30.0)  # long, so a slow machine cannot outlast it
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        await pilot.press("y", "a", "enter", "n", "escape")
        assert screen.ignored_keys == 5
        assert app.screen is screen and not session.responses
        screen.guard_s = 0.0  # the guard is over; now keys count
        assert screen.armed
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running)
        assert [r.answer for r in session.responses] == [PermissionAnswer.DENY]


async def test_modal_waits_for_a_pause_in_typing(session: FakeSession, make_app: Any) -> None:
    session.turns = [[Ask(bash_prompt("make deploy"))]]
    app = make_app(session, typing_pause_s=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "deploy")
        # Keep typing the next prompt; each key restarts the 1 s pause.
        started = time.monotonic()
        for ch in "and then run the tests":
            await pilot.press(ch)
            assert not isinstance(app.screen, PermissionScreen)
            await pilot.pause(0.05)
        assert time.monotonic() - started > 1.0  # longer than one pause: only typing held it
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        assert time.monotonic() - app.prompt_input.last_key_time >= 1.0
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running)
        assert app.prompt_input.text == "and then run the tests"  # the typing was kept
