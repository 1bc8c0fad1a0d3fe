""" "Yes, and don't ask again" for each kind of prompt, over the real session and scripted server:
Bash saves the command prefix, an edit allows edits for the session, an MCP tool saves the tool
(WebFetch's domain: ``test_question.py``). Each option names the rule it keeps and where."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.tui.screens.permission import PermissionScreen
from agent_cli.tui.widgets.items import NoticeLine
from agent_cli.tui.widgets.markdown import AssistantMessage
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, _ask, project, serve  # noqa: F401
from tests.tools.mcp.conftest import SERVERS

LOCAL = Path(".claude") / "settings.local.json"


def _options(screen: PermissionScreen) -> str:
    return str(screen.query_one("#perm-options").render())


def _notices(app: Any) -> list[str]:
    return [str(n.notice_text) for n in app.query(NoticeLine)]


async def test_bash_saves_the_command_prefix_and_shows_the_description(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    (project / "hello.py").write_text("print('hi from hello')\n")
    run = {"command": "python3 hello.py", "description": "Run the greeting script"}
    again = {"command": "python3 hello.py --twice", "description": "Run it again"}
    server = serve(
        Scenario.of(
            Turn([tool_use("Bash", run, id="t1")]),
            Turn([text("Ran it.")], match=Match(tool_result_for="t1")),
            # A later turn: the saved prefix rule lets the next python3 command run unasked.
            Turn([tool_use("Bash", again, id="t2")], match=Match(contains_text="once more")),
            Turn([text("Ran it again.")], match=Match(tool_result_for="t2")),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(pilot, "run hello")
        assert "Run the greeting script" in str(screen.query_one("#perm-description").render())
        await wait_for(pilot, lambda: "Yes" in _options(screen))
        options = _options(screen)
        assert "Yes, and don't ask again for `python3 hello.py` commands  (a)" in options
        assert "saves Bash(python3 hello.py *) to .claude/settings.local.json" in options
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert "Saved rule Bash(python3 hello.py *) to .claude/settings.local.json" in _notices(app)
        app.prompt_input.load_text("once more")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: not app.turn_running and len(server.requests) == 4, timeout=15
        )
        assert not isinstance(app.screen, PermissionScreen)
        assert app.query(AssistantMessage).last().source == "Ran it again."
    saved = json.loads((project / LOCAL).read_text())
    assert saved["permissions"]["allow"] == ["Bash(python3 hello.py *)"]
    server.assert_done()


async def test_edit_allows_all_edits_for_the_session(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
) -> None:
    first = {"file_path": str(project / "a.txt"), "content": "one\n"}
    second = {"file_path": str(project / "b.txt"), "content": "two\n"}
    server = serve(
        Scenario.of(
            Turn([tool_use("Write", first, id="w1")]),
            Turn([tool_use("Write", second, id="w2")], match=Match(tool_result_for="w1")),
            Turn([text("Both written.")], match=Match(tool_result_for="w2")),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(pilot, "write two files")
        await wait_for(pilot, lambda: "Yes" in _options(screen))
        options = _options(screen)
        assert "Yes, allow all edits during this session (accept edits mode)  (a)" in options
        await pilot.press("a")
        # The second Write runs without a prompt: nobody presses a key from here on.
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert app.session.mode == "acceptEdits"
        assert "accept" in str(app.status.render()).lower()
        assert app.query(AssistantMessage).last().source == "Both written."
    assert (project / "a.txt").read_text() == "one\n"
    assert (project / "b.txt").read_text() == "two\n"
    assert not (project / LOCAL).exists()  # for this session only: nothing saved
    server.assert_done()


async def test_mcp_tool_saves_the_tool(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    token = f"always-{tmp_path.name}"
    demo = {"command": sys.executable, "args": [str(SERVERS / "demo_server.py"), token]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": demo}}))
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".claude").mkdir()
    (project / LOCAL).write_text(json.dumps({"enabledMcpjsonServers": ["demo"]}))
    server = serve(
        Scenario.of(
            Turn([tool_use("ToolSearch", {"query": "select:mcp__demo__add"}, id="s1")]),
            Turn(
                [tool_use("mcp__demo__add", {"a": 20, "b": 22}, id="m1")],
                match=Match(tool_result_for="s1"),
            ),
            Turn([text("42.")], match=Match(tool_result_for="m1")),
        )
    )
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ask(pilot, "add them")  # the server connects as the turn starts
        await wait_for(pilot, lambda: "Yes" in _options(screen))
        options = _options(screen)
        assert "Yes, and don't ask again for mcp__demo__add  (a)" in options
        assert "saves mcp__demo__add to .claude/settings.local.json" in options
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.turn_running, timeout=15)
        assert app.query(AssistantMessage).last().source == "42."
    saved = json.loads((project / LOCAL).read_text())
    assert saved["permissions"]["allow"] == ["mcp__demo__add"]
    assert saved["enabledMcpjsonServers"] == ["demo"]  # the file's other keys are kept
    server.assert_done()
