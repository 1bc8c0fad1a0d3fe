"""Thinking in the app: each block one dim "✻ Thinking…" line before what it led to, Ctrl+O shows
what the model thought (a redacted block says so), and a resumed session shows them alike.
Pilot over the REAL AgentSession, real tools and the scripted server (which refuses a request
whose thinking blocks came back altered)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.options import RunOptions
from agent_cli.testing import Match, Scenario, Turn, redacted_thinking, text, thinking, tool_use
from agent_cli.tui.widgets.conversation import Entry, entries_from_messages
from agent_cli.tui.widgets.items import ToolCall, UserMessage
from agent_cli.tui.widgets.markdown import AssistantMessage, MarkdownText
from agent_cli.tui.widgets.thinking import COLLAPSED, REDACTED, ThinkingLine
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve

__all__ = ["project", "serve"]  # fixtures shared with the real-session tests

BYPASS = {"permission_mode": "bypassPermissions", "dangerously_skip_permissions": True}
PLAN = "The user wants the date.\nRun `date` rather than guess."
AFTER = "It printed the date; answer with it."


def _scenario() -> Scenario:
    return Scenario.of(
        Turn(
            [
                thinking(PLAN, signature="sig-plan=="),
                redacted_thinking("EuYBCkQYAiJA-opaque"),
                text("Let me check."),
                tool_use("Bash", {"command": "echo 2026-12-05"}, id="t1"),
            ]
        ),
        Turn([thinking(AFTER), text("It is 2026-12-05.")], match=Match(tool_result_for="t1")),
    )


def _shown(app: Any) -> list[str]:
    """The conversation's widgets, in order, as kinds (thinking lines as what they paint)."""
    out = []
    for w in app.conversation.children:
        if isinstance(w, ThinkingLine):
            out.append(str(w.render()))
        elif isinstance(w, (AssistantMessage, MarkdownText)):
            out.append("answer")
        elif isinstance(w, ToolCall):
            out.append("tool")
        elif isinstance(w, UserMessage):
            out.append("prompt")
    return out


def _painted_dim(widget: ThinkingLine) -> bool:
    """The line as painted: every character of "✻ Thinking…" dim and italic."""
    segments = [s for s in widget.render_line(0) if s.text.strip()]
    return bool(segments) and all(s.style and s.style.dim and s.style.italic for s in segments)


async def _check_collapsed_then_expanded(pilot: Any) -> None:
    app = pilot.app
    lines = list(app.query(ThinkingLine))
    assert [str(w.render()) for w in lines] == [COLLAPSED, REDACTED, COLLAPSED]
    assert all(_painted_dim(w) for w in lines)
    assert all(w.size.height == 1 for w in lines)  # one line each while collapsed
    await pilot.press("ctrl+o")
    await pilot.pause()
    plan, redacted, after = (str(w.render()) for w in lines)
    assert plan == f"{COLLAPSED}\n  The user wants the date.\n  Run `date` rather than guess."
    assert redacted.startswith(REDACTED + "\n  ") and "encrypted" in redacted
    assert after == f"{COLLAPSED}\n  {AFTER}"
    assert lines[0].size.height == 3
    await pilot.press("ctrl+o")  # and back
    await pilot.pause()
    assert [str(w.render()) for w in lines] == [COLLAPSED, REDACTED, COLLAPSED]


async def test_thinking_lines_collapse_expand_and_come_back_on_resume(
    project: Path, serve: Any
) -> None:
    server = serve(_scenario())
    app = _app(project, **BYPASS)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("what day is it?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.query(ThinkingLine)) == 3, timeout=15)
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        live = _shown(app)
        assert live == [
            "prompt",
            COLLAPSED,
            REDACTED,
            "answer",
            "tool",
            COLLAPSED,
            "answer",
        ], live
        await _check_collapsed_then_expanded(pilot)
    server.assert_done()  # the blocks went back unchanged (the server checks every request)

    from agent_cli.session.agent_session import AgentSession
    from agent_cli.tui.app import NerveApp

    options = RunOptions(continue_session=True, **BYPASS)
    resumed = NerveApp(
        AgentSession.create(options, cwd=project, interactive=True),
        cwd=project,
        typing_pause_s=0.0,
        guard_s=0.0,
    )
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(resumed.query(ThinkingLine)) == 3, timeout=15)
        assert _shown(resumed) == live
        await _check_collapsed_then_expanded(pilot)


def test_stored_thinking_blocks_become_entries() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "s"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "hello"},
            ],
        },
    ]
    assert entries_from_messages(messages) == [
        Entry("user", "hi"),
        Entry("thinking", "plan"),
        Entry("redacted_thinking", ""),
        Entry("assistant", "hello"),
    ]
