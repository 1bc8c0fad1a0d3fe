"""The main screen under Pilot: streaming, tool widgets, modes, interrupt, keys, history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.loop.events import (
    ErrorEvent,
    Notice,
    RetryEvent,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnFinished,
)
from agent_cli.transcripts.history import PromptHistory
from agent_cli.tui.turns import INTERRUPTED
from agent_cli.tui.widgets.items import NoticeLine, ToolCall, UserMessage
from agent_cli.tui.widgets.markdown import AssistantMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession, Hold


def notices(app: Any) -> list[str]:
    return [w.notice_text for w in app.query(NoticeLine)]


def status(app: Any) -> str:
    return str(app.status.render())


async def send(pilot: Any, text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


async def test_stream_tool_progress_retry_and_error(session: FakeSession, make_app: Any) -> None:
    long_output = "\n".join(f"line {i}" for i in range(12))
    session.turns = [
        [
            RetryEvent(2, 2.0, "overloaded"),
            TextDelta("# Plan\n\nI will "),
            TextDelta("**look**."),
            ToolStarted("t1", "Bash", {"command": "ls"}, "Bash(ls)"),
            ToolProgress("t1", None, "a.py\nb.py"),
            ToolFinished("t1", "Bash", long_output, False),
            Notice("Context is 80% full", "warning"),
            TextDelta("Done."),
            ErrorEvent("tool budget exceeded"),
            TurnFinished("end_turn", 1),
        ]
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "list files")
        await wait_for(pilot, lambda: not app.turn_running)
        kinds = [type(w).__name__ for w in app.conversation.children]
        # welcome, prompt, retry, text, tool, notice, text, error: everything in place, in order
        assert kinds == [
            "NoticeLine",
            "UserMessage",
            "NoticeLine",
            "AssistantMessage",
            "ToolCall",
            "NoticeLine",
            "AssistantMessage",
            "NoticeLine",
        ]
        texts = notices(app)
        assert "Retrying in 2.0 s (attempt 2): overloaded" in texts
        assert "Context is 80% full" in texts
        assert "Error: tool budget exceeded" in texts
        first, second = app.query(AssistantMessage)
        assert first.source == "# Plan\n\nI will **look**."
        assert second.source == "Done."
        assert app.query_one(UserMessage).prompt_text == "list files"
        tool = app.query_one(ToolCall)
        assert tool.header == "Bash(ls)"
        body = str(tool.query(".tool-body").first().render())
        assert "line 4" in body and "line 5" not in body and "+7 lines (ctrl+o to expand)" in body
        tool.focus()
        await pilot.press("enter")
        assert "line 11" in str(tool.query(".tool-body").first().render())
        await pilot.press("enter")
        assert "line 11" not in str(tool.query(".tool-body").first().render())


async def test_progress_shows_last_lines(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE):
        widget = ToolCall("t", "Bash(make)")
        await app.conversation.add(widget)
        # Each progress event carries the tool's whole current view; the widget shows its tail.
        for n in range(1, 11):
            widget.progress("\n".join(f"step {i}" for i in range(n)))
        body = str(widget.query(".tool-body").first().render())
        assert "step 9" in body and "step 4" in body and "step 3" not in body  # the last 6
        assert body.count("step 9") == 1


async def test_shift_tab_cycles_modes(make_app: Any) -> None:
    session = FakeSession()
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        assert status(app).startswith("default mode")
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            seen.append(status(app).split(" (")[0])
        assert seen == ["⏵⏵ accept edits on", "⏸ plan mode on", "default mode"]
        assert "claude-test" in status(app) and "$0.01" in status(app)
    session.check()


async def test_bypass_in_cycle_only_when_enabled(make_app: Any) -> None:
    session = FakeSession(bypass_available=True)
    app = make_app(session, bypass_available=True)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(3):
            await pilot.press("shift+tab")
        assert status(app).startswith("⏵⏵ bypass permissions on")
    session.check()


async def test_escape_interrupts_running_tool(session: FakeSession, make_app: Any) -> None:
    session.turns = [
        [
            ToolStarted("t1", "Bash", {"command": "sleep 100"}, "Bash(sleep 100)"),
            ToolProgress("t1", None, "waiting"),
            Hold("t1"),
        ]
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "wait a while")
        await wait_for(pilot, lambda: app.query(ToolCall) and app.turn_running)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running)
        assert session.aborts == 1
        assert notices(app).count(INTERRUPTED) == 1
        tool = app.query_one(ToolCall)
        assert tool.is_error and "Interrupted" in (tool.result_text or "")


async def test_ctrl_c_clears_input_then_interrupts(session: FakeSession, make_app: Any) -> None:
    session.turns = [[ToolStarted("t1", "Bash", {"command": "x"}, "Bash(x)"), Hold("t1")]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "run x")
        await wait_for(pilot, lambda: app.query(ToolCall))
        await pilot.press(*"draft")
        await pilot.press("ctrl+c")
        assert app.prompt_input.text == "" and session.aborts == 0
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.turn_running)
        assert session.aborts == 1 and INTERRUPTED in notices(app)


async def test_prompt_during_turn_is_queued(session: FakeSession, make_app: Any) -> None:
    session.turns = [
        [ToolStarted("t1", "Bash", {"command": "x"}, "Bash(x)"), Hold("t1")],
        [TextDelta("second answer"), TurnFinished("end_turn", 1)],
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await wait_for(pilot, lambda: app.query(ToolCall))
        await send(pilot, "second")
        assert "Queued: second" in notices(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: session.prompts == ["first", "second"])
        await wait_for(pilot, lambda: not app.turn_running)
        assert app.query(AssistantMessage).last().source == "second answer"


async def test_ctrl_d_twice_exits(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+d")
        await pilot.pause(0.05)
        assert app.is_running
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and session.closed


async def test_ctrl_j_newline_and_history_across_restarts(tmp_path: Path, make_app: Any) -> None:
    hist_path = tmp_path / "history.jsonl"
    first = FakeSession(turns=[[TurnFinished("end_turn", 1)], [TurnFinished("end_turn", 1)]])
    app = make_app(first, history=PromptHistory(tmp_path, hist_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"ab", "ctrl+j", *"cd")
        assert app.prompt_input.text == "ab\ncd"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running)
        await send(pilot, "second prompt")
        await wait_for(pilot, lambda: not app.turn_running)
    first.check()
    assert first.prompts == ["ab\ncd", "second prompt"]
    # Another project's prompt in the same file must not show up.
    PromptHistory(tmp_path / "other", hist_path).append("elsewhere")

    second = FakeSession()
    app2 = make_app(second, history=PromptHistory(tmp_path, hist_path))
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        assert app2.prompt_input.text == "second prompt"
        await pilot.press("up")
        assert app2.prompt_input.text == "ab\ncd"
        await pilot.press("up")  # a multi-line entry: Up first moves inside it
        assert app2.prompt_input.cursor_location[0] == 0
        await pilot.press("up")  # oldest entry: stays
        assert app2.prompt_input.text == "ab\ncd"
        await pilot.press("down")  # back to the last line
        assert app2.prompt_input.text == "ab\ncd"
        await pilot.press("down")  # on the last line: newer entry
        assert app2.prompt_input.text == "second prompt"
        await pilot.press("down")
        assert app2.prompt_input.text == ""
    second.check()


async def test_long_answer_splits_at_paragraphs_and_keeps_all_text(
    session: FakeSession, make_app: Any
) -> None:
    from agent_cli.tui.widgets.markdown import MarkdownText

    para = "word " * 200  # 1,000 chars
    fence = "```\n" + ("code line\n\n" * 300) + "```"  # blank lines inside a fence: no split
    parts = [para, "\n\n", para, "\n\n", fence, "\n\n", para, "\n\n", para, "\n\n", para]
    session.turns = [[*(TextDelta(p) for p in parts), TurnFinished("end_turn", 1)]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "long")
        await wait_for(pilot, lambda: not app.turn_running)
        await wait_for(pilot, lambda: len(app.query(MarkdownText)) >= 1)
        chunks = [w.source for w in app.query(".assistant")]  # type: ignore[attr-defined]
        assert len(chunks) >= 2
        assert "\n\n".join(chunks) == "".join(parts)
        assert all(c.count("```") % 2 == 0 for c in chunks)  # never split inside a fence
        assert app.stream_stats.backlog == 0
