"""The TUI over the REAL AgentSession: real SDK, real HTTP to the scripted server, real tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.options import RunOptions
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from agent_cli.transcripts.history import PromptHistory
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.turns import INTERRUPTED
from agent_cli.tui.widgets.items import NoticeLine, ToolCall
from agent_cli.tui.widgets.markdown import AssistantMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home, proj = tmp_path / "home", tmp_path / "project"
    for d in (home, proj, tmp_path / "policy", tmp_path / "claude-policy"):
        d.mkdir()
    for key in list(__import__("os").environ):
        if key.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NERVE_CONFIG_DIR", str(home / ".nerve"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("NERVE_POLICY_DIR", str(tmp_path / "policy"))
    monkeypatch.setenv("NERVE_CLAUDE_POLICY_DIR", str(tmp_path / "claude-policy"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return proj


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    servers: list[ScriptedServer] = []

    def start(scenario: Scenario) -> ScriptedServer:
        server = ScriptedServer(scenario).start()
        servers.append(server)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        return server

    yield start
    for server in servers:
        server.stop()


def _app(project: Path, *, factory: bool = False, **options: Any) -> Any:
    """The app over a real session; with ``factory`` it builds it in a thread, as ``nerve`` does."""
    from agent_cli.session.agent_session import AgentSession
    from agent_cli.tui.app import NerveApp

    def build() -> AgentSession:
        return AgentSession.create(RunOptions(**options), cwd=project, interactive=True)

    return NerveApp(
        None if factory else build(),
        session_factory=build if factory else None,
        cwd=project,
        history=PromptHistory(project, project.parent / "history.jsonl"),
        typing_pause_s=0.0,
        guard_s=0.0,
    )


def _touch_scenario(name: str, after: str) -> Scenario:
    return Scenario.of(
        Turn([text("I will create it."), tool_use("Bash", {"command": f"touch {name}"}, id="t1")]),
        Turn([text(after)], match=Match(tool_result_for="t1")),
    )


async def _ask(pilot: Any, prompt: str) -> PermissionScreen:
    pilot.app.prompt_input.load_text(prompt)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen), timeout=15)
    return pilot.app.screen  # type: ignore[no-any-return]


async def test_approve_runs_the_command(project: Path, serve: Any) -> None:
    server = serve(_touch_scenario("made.txt", "Created made.txt."))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(pilot, "make a file")
        assert "touch made.txt" in str(screen.query_one("#perm-command").render())
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert (project / "made.txt").exists()
        tool = app.query_one(ToolCall)
        assert "touch made.txt" in tool.header and not tool.is_error
        assert app.query(AssistantMessage).last().source == "Created made.txt."
    server.assert_done()


async def test_always_saves_the_rule(project: Path, serve: Any) -> None:
    server = serve(_touch_scenario("a.txt", "Done."))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(pilot, "make a")
        assert screen.prompt.verdict.suggestions, "the engine offers a rule to remember"
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        saved = [n.notice_text for n in app.query(NoticeLine) if n.notice_text.startswith("Saved")]
        assert len(saved) == 1 and ".claude/settings.local.json" in saved[0]
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert settings["permissions"]["allow"], settings
    server.assert_done()


async def test_deny_with_feedback_reaches_the_model(project: Path, serve: Any) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch nope.txt"}, id="t1")]),
        Turn([text("Understood.")], match=Match(contains_text="use a temp dir")),
    )
    server = serve(scenario)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot, "make nope")
        await pilot.press("tab", *"use a temp dir", "enter")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert not (project / "nope.txt").exists()
        tool = app.query_one(ToolCall)
        assert tool.is_error and tool.result_text == "Rejected: use a temp dir"
        assert app.query(AssistantMessage).last().source == "Understood."
        assert INTERRUPTED not in [n.notice_text for n in app.query(NoticeLine)]
    server.assert_done()


def _rejected_t1(body: Any) -> bool:
    """The request carries the rejection of t1 (the model learns it was refused)."""
    return any(
        b.get("type") == "tool_result"
        and b.get("tool_use_id") == "t1"
        and "doesn't want to proceed" in json.dumps(b.get("content"))
        for m in body["messages"]
        if isinstance(m.get("content"), list)
        for b in m["content"]
    )


@pytest.mark.parametrize("key", ["n", "escape"])
async def test_rejection_ends_the_turn(project: Path, serve: Any, key: str) -> None:
    scenario = Scenario.of(
        # Had the loop asked the model again after the rejection, this turn would answer it
        # and fail the match; it must wait for the user's next prompt instead.
        Turn([tool_use("Bash", {"command": "touch nope.txt"}, id="t1")]),
        Turn(
            [text("Using a temp dir.")],
            match=Match(contains_text="use a temp dir", predicate=_rejected_t1),
        ),
    )
    server = serve(scenario)
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot, "make nope")
        await pilot.press(key)
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert not (project / "nope.txt").exists()
        notices = [n.notice_text for n in app.query(NoticeLine)]
        assert notices.count(INTERRUPTED) == 1 and "Interrupted by user." not in notices
        assert len(server.requests) == 1, "the model was not asked again"
        tool = app.query_one(ToolCall)
        assert tool.is_error and tool.result_text == "Rejected"
        assert app.focused is app.prompt_input
        app.prompt_input.load_text("use a temp dir")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and len(server.requests) == 2, 15)
        await wait_for(pilot, lambda: app.query(AssistantMessage), timeout=15)
        assert app.query(AssistantMessage).last().source == "Using a temp dir."
    server.assert_done()


async def test_escape_interrupts_a_running_command(project: Path, serve: Any) -> None:
    loop = "for i in $(seq 30); do echo tick $i; sleep 1; done"
    server = serve(Scenario.of(Turn([tool_use("Bash", {"command": loop}, id="t1")])))
    app = _app(project, permission_mode="bypassPermissions", dangerously_skip_permissions=True)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("wait")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query(ToolCall), timeout=15)
        body = app.query_one(ToolCall).query(".tool-body").first()
        await wait_for(pilot, lambda: "tick 1" in str(body.render()), timeout=10)  # live progress
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, timeout=10)
        assert [n.notice_text for n in app.query(NoticeLine)].count(INTERRUPTED) == 1
        assert app.query_one(ToolCall).is_error
    server.assert_done()


async def test_session_built_behind_the_first_frame(project: Path, serve: Any) -> None:
    server = serve(_touch_scenario("early.txt", "Made it."))
    app = _app(project, factory=True)
    async with app.run_test(size=SIZE) as pilot:
        # Typed at once: the prompt waits for the session, then runs through the real loop.
        app.prompt_input.load_text("make early")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), timeout=15)
        assert app.session_ready and app.startup_error is None
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert (project / "early.txt").exists()
        assert app.query(AssistantMessage).last().source == "Made it."
    server.assert_done()
