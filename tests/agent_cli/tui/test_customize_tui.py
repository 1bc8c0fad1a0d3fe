"""Custom commands, /init, /memory and ``# note`` in the TUI over a REAL session (Pilot)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.screens.picker import ChoiceScreen
from agent_cli.tui.widgets.items import NoticeLine, UserMessage
from tests.agent_cli.customize.showcase import make_showcase
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401


def _notices(app: Any) -> list[str]:
    return [str(n.notice_text) for n in app.query(NoticeLine)]


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content]


async def _submit(pilot: Any, line: str) -> None:
    pilot.app.prompt_input.load_text(line)
    pilot.app.prompt_input.completion_list.hide()
    await pilot.press("enter")


async def test_a_custom_command_completes_runs_and_is_listed(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    make_showcase(project)
    server = serve(Scenario.of(Turn([text("Reviewed.")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/", "p", "r")
        items = {c.value: c.label for c in app.completion_list.items}
        assert "/pr-review " in items
        assert "[pr-number] Review a pull request" in items["/pr-review "]
        app.prompt_input.clear()
        app.completion_list.hide()
        await _submit(pilot, "/help")
        await pilot.pause(0.05)
        help_text = _notices(app)[-1]
        assert "/release-notes" in help_text and "/frontend:component" in help_text
        await _submit(pilot, "/pr-review 123")
        await wait_for(pilot, lambda: server.requests and not app.turn_running, timeout=15)
        assert app.query(UserMessage).last().prompt_text == "/pr-review 123"
    header, body = _texts(server.requests[0].body["messages"][0])
    assert "<command-args>123</command-args>" in header
    assert "Review the pull request: 123" in body
    server.assert_done()


async def test_a_command_line_that_needs_permission_asks_first(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    (project / ".claude/commands").mkdir(parents=True)
    (project / ".claude/commands/mk.md").write_text("Made it: !`touch made.txt && echo yes`\n")
    server = serve(Scenario.of(Turn([text("Noted.")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _submit(pilot, "/mk")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), timeout=15)
        assert "touch made.txt" in str(app.screen.query_one("#perm-command").render())
        assert server.requests == []  # nothing is sent before the line has run
        await pilot.press("a")  # yes, and don't ask again
        await wait_for(pilot, lambda: server.requests and not app.turn_running, timeout=15)
        assert any(n.startswith("Saved rule") for n in _notices(app))
    assert (project / "made.txt").exists()
    assert _texts(server.requests[0].body["messages"][0])[1] == "Made it: yes"
    saved = json.loads((project / ".claude/settings.local.json").read_text())
    assert saved["permissions"]["allow"]


async def test_init_shows_the_new_file_for_approval(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    target = project / "AGENTS.md"
    write = {"file_path": str(target), "content": "# Guide\n\nRun the tests with pytest.\n"}
    server = serve(
        Scenario.of(
            Turn([tool_use("Write", write, id="w")]),
            Turn([text("Wrote it.")], match=Match(tool_result_for="w")),
        )
    )
    app = _app(project, permission_mode="acceptEdits")
    async with app.run_test(size=SIZE) as pilot:
        await _submit(pilot, "/init")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), timeout=15)
        preview = str(app.screen.query_one("#perm-preview").render())
        assert "Run the tests with pytest." in preview
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running and len(server.requests) == 2, 15)
    assert target.read_text() == write["content"]


async def test_memory_opens_the_chosen_file_in_the_editor(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho "EDITED BY $0" >> "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    (project / "CLAUDE.md").write_text("existing\n")
    serve(Scenario.of())
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _submit(pilot, "/memory")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert app.screen.options[0].startswith(f"Project memory: {project / 'CLAUDE.md'}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.startswith("Edited") for n in _notices(app)))
    assert (project / "CLAUDE.md").read_text() == f"existing\nEDITED BY {editor}\n"


async def test_a_hash_line_is_a_note_for_the_memory_file_the_user_picks(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    server = serve(Scenario.of())
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await _submit(pilot, "# always run ruff before committing")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert "Project memory, local" in app.screen.options[1]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: any(n.startswith("Noted in") for n in _notices(app)))
        await _submit(pilot, "# and keep it short")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: "Note not saved." in _notices(app))
    assert (project / "CLAUDE.local.md").read_text() == "- always run ruff before committing\n"
    assert server.requests == []  # a note is not a prompt
    assert not os.path.exists(project / "AGENTS.md")
