"""/compact, /context and /rewind in the real app: real session, real SDK, scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.loop.compaction_prompt import SUMMARY_MARKER
from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.rewind import RewindScreen
from agent_cli.tui.widgets.compact import CompactLine
from agent_cli.tui.widgets.items import NoticeLine, UserMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve

__all__ = ["project", "serve"]  # fixtures shared with test_real_session

SUMMARY = "<summary>The user said hello.</summary>"


def _summary_turn(**kw: Any) -> Turn:
    return Turn(
        [text(SUMMARY)],
        match=Match(predicate=lambda b: SUMMARY_MARKER in json.dumps(b["messages"])),
        **kw,
    )


async def _send(pilot: Any, line: str) -> None:
    pilot.app.prompt_input.load_text(line)
    await pilot.press("enter")


def _notices(app: Any) -> list[str]:
    return [n.notice_text for n in app.query(NoticeLine)]


async def test_compact_shows_progress_stays_responsive_and_esc_cancels(
    project: Path, serve: Any
) -> None:
    server = serve(
        Scenario.of(
            Turn([text("hello back")]),
            _summary_turn(holds={0: "summary"}),
            _summary_turn(),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "hello")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        before = list(app.session.loop.messages)
        await _send(pilot, "/compact")
        await wait_for(pilot, lambda: app.query(CompactLine), timeout=15)
        assert "Compacting the conversation" in app.query(CompactLine).last().notice_text
        await pilot.press(*"typing while it works")  # the prompt still takes keys
        assert app.prompt_input.text == "typing while it works"
        app.prompt_input.clear()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        server.gate("summary").set()
        line = app.query(CompactLine).last().notice_text
        assert "cancelled" in line and "unchanged" in line
        assert app.session.loop.messages == before
        await _send(pilot, "/compact")
        await wait_for(
            pilot,
            lambda: "Compacted the conversation" in app.query(CompactLine).last().notice_text,
            timeout=15,
        )
        assert len(app.session.loop.messages) == 1
        await _send(pilot, "/context")
        await wait_for(pilot, lambda: any("Context ·" in n for n in _notices(app)), timeout=5)
        shown = next(n for n in _notices(app) if "Context ·" in n)
        assert "System prompt" in shown and "Free space" in shown and "[" in shown
    server.assert_done()


async def test_esc_esc_on_an_empty_prompt_rewinds_code_and_conversation(
    project: Path, serve: Any
) -> None:
    target = project / "a.txt"
    target.write_text("original\n")
    write = {"file_path": str(target), "content": "changed\n"}
    server = serve(
        Scenario.of(
            Turn([tool_use("Read", {"file_path": str(target)})]),
            Turn([tool_use("Write", write)]),
            Turn([text("rewrote it")]),
        )
    )
    app = _app(project, permission_mode="bypassPermissions", dangerously_skip_permissions=True)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "rewrite a.txt")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert target.read_text() == "changed\n"
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen), timeout=5)
        screen = app.screen
        await pilot.press("enter")  # the newest prompt is highlighted
        summary = str(screen.query_one("#rewind-summary").render())
        assert "a.txt" in summary and "restore" in summary
        assert target.read_text() == "changed\n"  # nothing happens before the choice
        await pilot.press("enter")  # Restore code and conversation
        await wait_for(pilot, lambda: target.read_text() == "original\n", timeout=5)
        await wait_for(pilot, lambda: app.prompt_input.text == "rewrite a.txt", timeout=5)
        assert not app.query(UserMessage)  # the conversation view starts over
        assert app.session.loop.messages == []
    server.assert_done()


async def test_rewind_picker_esc_goes_back_then_out_without_changes(
    project: Path, serve: Any
) -> None:
    server = serve(Scenario.of(Turn([text("hi")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "hello")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        await _send(pilot, "/rewind")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen), timeout=5)
        await pilot.press("enter", "escape")  # into the choices, back to the prompts
        assert isinstance(app.screen, RewindScreen) and app.screen.chosen is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, RewindScreen), timeout=5)
        assert len(app.session.loop.messages) == 2
    server.assert_done()


async def test_compact_during_a_turn_is_refused_and_the_turn_goes_on(
    project: Path, serve: Any
) -> None:
    server = serve(Scenario.of(Turn([text("slow answer")], holds={0: "answer"})))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "hello")
        await wait_for(pilot, lambda: app.turn_running, timeout=15)
        await _send(pilot, "/compact")
        await wait_for(pilot, lambda: any("Wait for the running turn" in n for n in _notices(app)))
        server.gate("answer").set()
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert not app.query(CompactLine)
        assert [m["role"] for m in app.session.loop.messages] == ["user", "assistant"]
    server.assert_done()
