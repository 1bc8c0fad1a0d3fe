"""``/resume`` inside a running session restores what ``nerve -r ID`` restores."""

from __future__ import annotations

import os
from pathlib import Path

from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.loop.test_agent_loop import _collect, env  # noqa: F401  (fixture)


async def test_interactive_resume_restores_mode_rules_read_state_and_messages(env: Path) -> None:  # noqa: F811
    notes = env / "notes.txt"
    notes.write_text("alpha\n")
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(notes)}, id="r1")]),
        Turn([text("read it")], match=Match(tool_result_for="r1")),
    )
    with ScriptedServer(scenario) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        first = AgentSession.create(RunOptions(), cwd=env)
        first.set_mode("acceptEdits")
        first.add_rule("allow", "Bash(make test *)", "session")
        assert (await _collect(first, "read notes"))[-1].result_text == "read it"
        old_id = first.session_id
        await first.close()
        server.assert_done()

    second = AgentSession.create(RunOptions(), cwd=env)
    second.set_mode("plan")
    messages = await second.resume(old_id)
    assert second.session_id == old_id
    assert second.mode == "acceptEdits"
    assert any(r.rule == "Bash(make test *)" and r.source == "session" for r in second.rules())
    assert notes.resolve() in second.ctx.state.read_files
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert second.ctx.options.session_dir == second.transcript.session_dir  # type: ignore[union-attr]
    await second.close()


async def test_plan_mode_is_not_restored(env: Path) -> None:  # noqa: F811
    with ScriptedServer(Scenario.of(Turn([text("hi")]))) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        first = AgentSession.create(RunOptions(), cwd=env)
        await _collect(first, "hello")
        first.set_mode("plan")
        old_id = first.session_id
        await first.close()
    second = AgentSession.create(RunOptions(permission_mode="acceptEdits"), cwd=env)
    await second.resume(old_id)
    assert second.mode == "default"
    await second.close()


async def test_continue_exposes_the_restored_conversation_for_the_ui(env: Path) -> None:  # noqa: F811
    with ScriptedServer(Scenario.of(Turn([text("hello back")]))) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        first = AgentSession.create(RunOptions(), cwd=env)
        await _collect(first, "hello")
        await first.close()
    fresh = AgentSession.create(RunOptions(), cwd=env)
    assert fresh.restored_messages() == []
    await fresh.close()
    again = AgentSession.create(RunOptions(continue_session=True), cwd=env, interactive=True)
    assert [m["role"] for m in again.restored_messages()] == ["user", "assistant"]
    await again.close()


async def test_the_resume_list_leaves_out_the_session_in_use(env: Path) -> None:  # noqa: F811
    with ScriptedServer(Scenario.of(Turn([text("one")]), Turn([text("two")]))) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        first = AgentSession.create(RunOptions(), cwd=env)
        await _collect(first, "hello")
        old_id = first.session_id
        await first.close()
        current = AgentSession.create(RunOptions(), cwd=env)
        await _collect(current, "a second conversation")
        listed = [s["session_id"] for s in current.list_sessions()]
        assert listed == [old_id]  # not the one being typed in, which is newest
        await current.close()
        server.assert_done()
