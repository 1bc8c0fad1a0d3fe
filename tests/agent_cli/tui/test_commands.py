"""Slash commands, ``!command``, completion, and /resume with lazy loading, under Pilot."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from agent_cli.session.port import RuleView, ToolView
from agent_cli.slash.registry import parse_slash
from agent_cli.tui.screens.resume import ResumeScreen
from agent_cli.tui.widgets.conversation import WINDOW, entries_from_messages
from agent_cli.tui.widgets.items import NoticeLine, ToolCall, UserMessage
from agent_cli.tui.widgets.markdown import MarkdownText
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession


def last_notice(app: Any) -> str:
    return str(app.query(NoticeLine).last().notice_text)


async def run(pilot: Any, text: str) -> None:
    # Set the text directly: typing "/" would open completion, which has its own tests.
    pilot.app.prompt_input.load_text(text)
    pilot.app.prompt_input.completion_list.hide()
    await pilot.press("enter")
    await pilot.pause(0.02)


def test_parse_slash() -> None:
    assert parse_slash("/mode plan") == ("mode", "plan")
    assert parse_slash("  /HELP ") == ("help", "")
    assert parse_slash("//not a command") is None
    assert parse_slash("hello /mode") is None


async def test_help_lists_commands(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/help")
        text = last_notice(app)
        for name in ("/clear", "/resume", "/permissions", "/mode", "/model", "/cost", "/tools"):
            assert name in text
        assert "Ctrl+J newline" in text
    assert session.prompts == []  # nothing went to the model


async def test_unknown_command(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/frobnicate now")
        assert last_notice(app) == "Unknown command /frobnicate. Type /help for the list."


async def test_clear(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        app.conversation.mount(UserMessage("old"))
        await run(pilot, "/clear")
        assert session.clears == 1
        assert not app.query(UserMessage)
        assert last_notice(app) == "Started a new conversation."


async def test_mode_and_model(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/mode")
        assert last_notice(app) == "Permission mode: default (default mode)"
        await run(pilot, "/mode plan")
        assert session.mode == "plan" and str(app.status.render()).startswith("⏸ plan mode on")
        await run(pilot, "/mode manual")
        assert session.mode == "default"
        await run(pilot, "/mode bypassPermissions")
        assert session.mode == "default"
        assert "only available when enabled at launch" in last_notice(app)
        await run(pilot, "/mode sideways")
        assert "unknown permission mode 'sideways'" in last_notice(app)
        assert "dontAsk, auto)" in last_notice(app)  # the sub-agents' internal bubble not offered
        await run(pilot, "/model claude-other")
        assert session.model == "claude-other" and "claude-other" in str(app.status.render())
        assert last_notice(app) == "Model: claude-other"


async def test_cost_and_tools(session: FakeSession, make_app: Any) -> None:
    session.tool_views = [
        ToolView("Bash", "Run a shell command", False, False),
        ToolView("mcp__gh__issues", "List issues", True, True),
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/cost")
        assert last_notice(app) == (
            "Input 1.2k tokens · output 340 tokens · context 15.4k · 1 turns · cost $0.01"
        )
        await run(pilot, "/tools")
        text = last_notice(app)
        assert "Tools (2):" in text
        assert "mcp__gh__issues" in text and "[deferred, mcp]" in text
        assert "Bash" in text and "Bash  [" not in text


async def test_permissions_list_add_remove(session: FakeSession, make_app: Any) -> None:
    session.rule_list = [
        RuleView("deny", "Read(./.env)", "projectSettings"),
        RuleView("allow", "Bash(git status)", "userSettings"),
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/permissions")
        assert last_notice(app).splitlines() == [
            "Permission rules:",
            "allow  Bash(git status)  (userSettings)",
            "deny   Read(./.env)  (projectSettings)",
        ]
        await pilot.press("escape")  # the app also opened the rules editor
        await run(pilot, "/permissions add allow Bash(npm test *)")
        assert RuleView("allow", "Bash(npm test *)", "localSettings") in session.rule_list
        assert last_notice(app) == "Added allow rule Bash(npm test *) to local settings."
        await run(pilot, "/permissions remove deny Read(./.env)")
        assert RuleView("deny", "Read(./.env)", "projectSettings") not in session.rule_list
        assert last_notice(app) == "Removed deny rule Read(./.env) from projectSettings."
        await run(pilot, "/permissions remove deny Read(./.env)")
        assert last_notice(app) == "No deny rule Read(./.env) that can be removed."
        await run(pilot, "/permissions add maybe Bash")
        assert last_notice(app).startswith("usage: /permissions")
        await run(pilot, "/permissions add allow Bash(unclosed")
        assert last_notice(app).startswith("Bad rule 'Bash(unclosed'")


@pytest.mark.parametrize("command", ["/exit", "/quit"])
async def test_exit(command: str, session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, command)
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_bang_runs_shell(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "!echo hello-from-shell")
        await wait_for(pilot, lambda: app.query(ToolCall) and app.query_one(ToolCall).result_text)
        widget = app.query_one(ToolCall)
        assert widget.header == "! echo hello-from-shell"
        assert widget.result_text == "hello-from-shell\n"
    assert session.shell_commands == ["echo hello-from-shell"] and session.prompts == []


async def test_slash_completion(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/", "p")
        items = [c.value for c in app.completion_list.items]
        assert items == ["/permissions "]
        await pilot.press("tab")
        assert app.prompt_input.text == "/permissions "
        assert not app.completion_list.display
        app.prompt_input.clear()
        await pilot.press("/", "c", "o")
        assert [c.value for c in app.completion_list.items] == [
            "/compact ",
            "/config ",
            "/context ",
            "/cost ",
        ]
        await pilot.press("s")
        assert [c.value for c in app.completion_list.items] == ["/cost "]
        await pilot.press("enter")  # Enter takes the completion and runs it
        await pilot.pause(0.02)
        assert last_notice(app).startswith("Input 1.2k tokens")


async def test_at_path_completion(session: FakeSession, make_app: Any, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print()\n")
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / ".secret").write_text("")
    session.turns = [[]]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"look at @s")
        assert [c.label for c in app.completion_list.items] == ["@src/", "@setup.cfg"]
        await pilot.press("tab")
        assert app.prompt_input.text == "look at @src/"
        assert [c.label for c in app.completion_list.items] == ["@src/main.py"]
        await pilot.press("enter")  # Enter takes a path completion without sending
        assert app.prompt_input.text == "look at @src/main.py "
        await pilot.press(*"please", "enter")
        await wait_for(pilot, lambda: not app.turn_running and session.prompts)
    # The mention stays in the text: the session resolves it.
    assert session.prompts == ["look at @src/main.py please"]


async def test_resume_picker_filters_and_resumes(session: FakeSession, make_app: Any) -> None:
    now = time.time()
    session.stored = [
        {"session_id": "s-new", "title": "Fix the login bug", "mtime": now - 60, "size": 2048},
        {"session_id": "s-old", "title": "Add dark mode", "mtime": now - 7200, "size": 10},
    ]
    session.stored_messages = {
        "s-old": [
            {"role": "user", "content": "Add dark mode"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Read",
                        "input": {"file_path": "a.css"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "body {}"}],
            },
            "garbage",  # type: ignore[list-item]
        ]
    }
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await pilot.press(*"dark")
        assert [s["session_id"] for s in app.screen.shown] == ["s-old"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(ToolCall))
        assert session.session_id == "s-old"
        assert app.query_one(UserMessage).prompt_text == "Add dark mode"
        assert app.query_one(MarkdownText).source == "Looking."
        tool = app.query_one(ToolCall)
        assert tool.header == "Read(a.css)" and tool.result_text == "body {}"


async def test_long_conversation_mounts_lazily(session: FakeSession, make_app: Any) -> None:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
        for i in range(2000)
    ]
    session.stored_messages = {"big": messages}
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await run(pilot, "/resume big")
        await wait_for(pilot, lambda: len(app.query(UserMessage)) > 0)
        mounted = len(app.query(UserMessage)) + len(app.query(MarkdownText))
        assert mounted == WINDOW
        assert app.conversation.unmounted == 2000 - WINDOW
        assert app.query(MarkdownText).last().source == "message 1999"
        app.conversation.scroll_home(animate=False)
        await wait_for(pilot, lambda: app.conversation.unmounted == 2000 - 2 * WINDOW)
        first = app.query(UserMessage).first()
        assert first.prompt_text == f"message {2000 - 2 * WINDOW}"


def test_entries_tolerate_bad_shapes() -> None:
    entries = entries_from_messages(
        [{"role": "user"}, {"role": "assistant", "content": [1, {"type": "thinking"}]}, {}]  # type: ignore[list-item]
    )
    # the malformed pieces are skipped; a thinking block (its text may be empty: the API can
    # omit it) is the one dim "Thinking" line, as live (tui/widgets/thinking.py)
    assert [(e.kind, e.text) for e in entries] == [("thinking", "")]


async def test_a_resumed_session_shows_its_conversation_at_start(
    session: FakeSession, make_app: Any
) -> None:
    session.restored = [
        {"role": "user", "content": "Fix the flaky test"},
        {"role": "assistant", "content": [{"type": "text", "text": "It was a race."}]},
    ]
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.query(UserMessage))
        assert app.query_one(UserMessage).prompt_text == "Fix the flaky test"
        assert app.query_one(MarkdownText).source == "It was a race."


async def test_resume_without_an_id_opens_the_picker_at_start(
    session: FakeSession, make_app: Any
) -> None:
    session.stored = [
        {"session_id": "s-1", "title": "Earlier work", "mtime": time.time(), "size": 9}
    ]
    session.stored_messages = {"s-1": [{"role": "user", "content": "Earlier work"}]}
    app = make_app(session, open_resume_picker=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.session_id == "s-1")
        await wait_for(pilot, lambda: app.query(UserMessage))
        assert app.query_one(UserMessage).prompt_text == "Earlier work"
