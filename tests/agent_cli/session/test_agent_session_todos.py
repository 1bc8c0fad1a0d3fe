"""TodoWrite in a real session: real SDK over real HTTP to the scripted server, real pipeline."""

from __future__ import annotations

import os
from pathlib import Path

from agent_cli.loop.events import ToolFinished
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.loop.test_agent_loop import _collect, env  # noqa: F401  (fixture)
from tools.builtin.todo import RESULT_MESSAGE

TODOS = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]
TWO_RUNNING = [dict(t, status="in_progress") for t in TODOS[:2]]


def _scenario() -> Scenario:
    return Scenario.of(
        Turn([text("Planning."), tool_use("TodoWrite", {"todos": TODOS}, id="w1")]),
        Turn(
            [tool_use("TodoWrite", {"todos": TWO_RUNNING}, id="w2")],
            match=Match(tool_result_for="w1"),
        ),
        Turn([text("On it.")], match=Match(tool_result_for="w2")),
    )


async def test_model_writes_todos_and_the_session_shows_them(env: Path) -> None:  # noqa: F811
    with ScriptedServer(_scenario()) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        # Not interactive and no handler: any permission prompt would be a denial.
        session = AgentSession.create(RunOptions(), cwd=env)
        assert session.todos() == []
        events = await _collect(session, "fix the parser bug")
        server.assert_done()
        finished = [e for e in events if isinstance(e, ToolFinished)]
        assert [(e.tool_use_id, e.is_error) for e in finished] == [("w1", False), ("w2", True)]
        assert finished[0].content == RESULT_MESSAGE
        assert finished[0].output.new_todos == TODOS
        assert "exactly one may be in_progress" in str(finished[1].content)
        # The refused second call left the list as the first call wrote it.
        assert session.todos() == TODOS
        # The tool went to the model with Claude Code's schema.
        tools = {t["name"]: t for t in server.requests[0].body["tools"]}
        item = tools["TodoWrite"]["input_schema"]["$defs"]["TodoItem"]
        assert item["required"] == ["content", "status", "activeForm"]
        old_id = session.session_id
        await session.close()

    # `nerve -c`: the list comes back with the conversation.
    again = AgentSession.create(RunOptions(continue_session=True), cwd=env, interactive=True)
    assert again.session_id == old_id
    assert again.todos() == TODOS
    again.clear()
    assert again.todos() == []
    # `/resume`: the same.
    assert await again.resume(old_id)
    assert again.todos() == TODOS
    await again.close()
