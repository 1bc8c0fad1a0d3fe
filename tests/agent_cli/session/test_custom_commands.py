"""Custom commands, skills, rules and /init in a real session (real SDK, scripted server)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_cli.loop.events import ErrorEvent, ToolFinished, TurnFinished
from agent_cli.model.config import resolve_model
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.customize.showcase import make_showcase
from tests.agent_cli.loop.test_agent_loop import _collect, env  # noqa: F401  (fixture)
from tools.context import PermissionAnswer, PermissionPrompt, PermissionResponse


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if b.get("type") == "text"]


def _session(server: ScriptedServer, cwd: Path, **opts: Any) -> AgentSession:
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    return AgentSession.create(RunOptions(**opts), cwd=cwd)


def _finished(events: list[Any]) -> dict[str, ToolFinished]:
    return {e.tool_use_id: e for e in events if isinstance(e, ToolFinished)}


async def test_a_command_turn_sends_the_header_and_body_and_its_rules_end_with_it(
    env: Path,  # noqa: F811
) -> None:
    project = make_showcase(env)
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "git add -A"}, id="a1")]),
        Turn([text("staged")], match=Match(tool_result_for="a1")),
        Turn([tool_use("Bash", {"command": "git add -A"}, id="a2")]),
        Turn([text("refused")], match=Match(tool_result_for="a2")),
    )
    with ScriptedServer(scenario) as server:
        session = _session(server, project / "src")
        events = await _collect(session, "/commit tidy up")
        first = server.requests[0].body["messages"][0]
        header, body = _texts(first)
        assert header == (
            "<command-message>commit</command-message>\n<command-name>/commit</command-name>\n"
            "<command-args>tidy up</command-args>"
        )
        assert "- Current branch: main" in body and "Message hint: tidy" in body
        assert not _finished(events)["a1"].is_error  # `Bash(git add:*)` from allowed-tools
        events = await _collect(session, "stage again")
        assert "not granted" in str(_finished(events)["a2"].content)  # the rule ended
        assert all(r.source != "command" for r in session.rules())
        server.assert_done()
        await session.close()


async def test_model_frontmatter_switches_the_model_for_that_turn(env: Path) -> None:  # noqa: F811
    project = make_showcase(env)
    with ScriptedServer(Scenario.of(Turn([text("made")]), Turn([text("ok")]))) as server:
        session = _session(server, project)
        before = session.loop.model_name
        await _collect(session, "/frontend:component Button")
        await _collect(session, "thanks")
        models = [r.body["model"] for r in server.requests]
        assert models == [resolve_model("haiku"), before]
        body = _texts(server.requests[0].body["messages"][0])[1]
        assert "Create the component Button in src/components/Button.tsx" in body
        assert "STYLE-MARKER" in body  # @docs/style.md, read through the Read tool
        await session.close()


async def test_a_denied_command_line_sends_nothing(env: Path) -> None:  # noqa: F811
    (env / ".claude/commands").mkdir(parents=True)
    (env / ".claude/commands/mk.md").write_text("Made: !`touch made.txt`\n")
    with ScriptedServer(Scenario.of()) as server:
        session = _session(server, env)
        events = await _collect(session, "/mk")
        errors = [e.message for e in events if isinstance(e, ErrorEvent)]
        assert errors and "/mk was not run" in errors[0] and "touch made.txt" in errors[0]
        [finished] = [e for e in events if isinstance(e, TurnFinished)]
        assert finished.is_error and finished.num_turns == 0
        assert server.requests == [] and not (env / "made.txt").exists()
        await session.close()


async def test_a_path_rule_arrives_with_the_first_matching_read(env: Path) -> None:  # noqa: F811
    project = make_showcase(env)
    button = str(project / "src/components/Button.tsx")
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": button}, id="r1")]),
        Turn([tool_use("Read", {"file_path": button}, id="r2")], match=Match(tool_result_for="r1")),
        Turn([text("done")], match=Match(tool_result_for="r2")),
    )
    with ScriptedServer(scenario) as server:
        session = _session(server, project)
        await _collect(session, "look at the button")
        system = str(server.requests[0].body["system"])
        assert "RULE-UNCONDITIONAL-MARKER" in system and "RULE-REACT-MARKER" not in system

        def reminders(i: int) -> list[str]:
            msgs = server.requests[i].body["messages"]
            return [t for m in msgs for t in _texts(m) if "RULE-REACT-MARKER" in t]

        assert reminders(0) == []
        assert len(reminders(1)) == 1 and "<system-reminder>" in reminders(1)[0]
        assert len(reminders(2)) == 1  # attached once, not again on the second read
        session.clear()
        provider = session.ctx.options.services.file_context
        assert len(provider.on_read(Path(button), None)) == 1  # a new conversation: again
        await session.close()


async def test_a_loaded_skill_allows_its_tools_until_the_turn_ends(env: Path) -> None:  # noqa: F811
    project = make_showcase(env)
    script = str(project / ".claude/skills/release-notes/scripts/collect.py")
    run = {"command": f"python3 {script}"}
    scenario = Scenario.of(
        Turn([tool_use("Skill", {"skill": "release-notes"}, id="s1")]),
        Turn([tool_use("Bash", run, id="b1")], match=Match(tool_result_for="s1")),
        Turn([text("notes drafted")], match=Match(tool_result_for="b1")),
        Turn([tool_use("Bash", run, id="b2")]),
        Turn([text("no")], match=Match(tool_result_for="b2")),
    )
    with ScriptedServer(scenario) as server:
        session = _session(server, project)
        assert "release-notes: Draft release notes" in str(
            server.requests or session.loop.system_prompt
        )
        events = await _collect(session, "draft the release notes")
        done = _finished(events)
        assert "Base directory for this skill" in str(done["s1"].content)
        assert done["b1"].content == "SKILL-HELPER-OUTPUT"
        events = await _collect(session, "run it again")
        assert "not granted" in str(_finished(events)["b2"].content)
        server.assert_done()
        await session.close()


async def test_init_shows_the_diff_for_approval_even_in_accept_edits(env: Path) -> None:  # noqa: F811
    target = env / "AGENTS.md"
    content = "# Project\n\nRun `pytest`.\n"
    scenario = Scenario.of(
        Turn([tool_use("Write", {"file_path": str(target), "content": content}, id="w1")]),
        Turn([text("Wrote AGENTS.md.")], match=Match(tool_result_for="w1")),
    )
    asked: list[PermissionPrompt] = []

    async def approve(prompt: PermissionPrompt) -> PermissionResponse:
        asked.append(prompt)
        return PermissionResponse(PermissionAnswer.ALLOW)

    with ScriptedServer(scenario) as server:
        session = _session(server, env, permission_mode="acceptEdits")
        session.set_permission_handler(approve)
        await _collect(session, "/init")
        body = _texts(server.requests[0].body["messages"][0])[1]
        assert f"create {target}" in body and "Write tool" in body
        assert [p.tool_name for p in asked] == ["Write"]
        assert asked[0].preview is not None and "Run `pytest`." in asked[0].preview
        assert target.read_text() == content
        await session.close()


async def test_esc_while_a_command_line_runs_sends_nothing(env: Path) -> None:  # noqa: F811
    import asyncio

    (env / ".claude/commands").mkdir(parents=True)
    (env / ".claude/commands/slow.md").write_text(
        "---\nallowed-tools: Bash(touch:*), Bash(sleep:*)\n---\nOut: !`touch started && sleep 30`\n"
    )
    with ScriptedServer(Scenario.of()) as server:
        session = _session(server, env)
        turn = asyncio.ensure_future(_collect(session, "/slow"))
        while not (env / "started").exists():
            await asyncio.sleep(0.01)
        session.abort()
        events = await turn
        [finished] = [e for e in events if isinstance(e, TurnFinished)]
        assert finished.stop_reason == "aborted" and finished.is_error
        assert server.requests == []
        await session.close()


async def test_a_typed_skill_names_its_folder_and_makes_it_readable(env: Path) -> None:  # noqa: F811
    project = make_showcase(env)
    template = project / ".claude/skills/release-notes/template.md"
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(template)}, id="r")]),
        Turn([text("ok")], match=Match(tool_result_for="r")),
    )
    with ScriptedServer(scenario) as server:
        session = _session(server, project / "src")  # the skill folder is outside the cwd
        events = await _collect(session, "/release-notes")
        body = _texts(server.requests[0].body["messages"][0])[1]
        assert body.startswith(f"Base directory for this skill: {template.parent}")
        assert "SKILL-TEMPLATE-MARKER" in str(_finished(events)["r"].content)
        await session.close()


async def test_a_commands_model_alias_is_remapped_by_settings_env(env: Path) -> None:  # noqa: F811
    project = make_showcase(env)
    user = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('{"env": {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-air"}}')
    with ScriptedServer(Scenario.of(Turn([text("made")]))) as server:
        session = _session(server, project)
        await _collect(session, "/frontend:component Button")  # frontmatter: model: haiku
        assert [r.body["model"] for r in server.requests] == ["glm-air"]
        await session.close()
