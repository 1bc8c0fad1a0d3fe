"""The agent loop in-process: real session, real SDK, scripted server on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agent_cli.loop.events import (
    ErrorEvent,
    Notice,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_")):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("NERVE_POLICY_DIR", str(tmp_path / "policy"))
    monkeypatch.setenv("NERVE_CLAUDE_POLICY_DIR", str(tmp_path / "cpolicy"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    # These tests put hooks in project settings; trust is tested in test_trust.py.
    monkeypatch.setenv("NERVE_TRUST_ALL", "1")
    project = tmp_path / "project"
    project.mkdir()
    return project


async def _session(server: ScriptedServer, project: Path, **opts: Any) -> AgentSession:
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    return AgentSession.create(RunOptions(**opts), cwd=project)


async def _collect(session: AgentSession, prompt: str, on_event: Any = None) -> list[Any]:
    events = []
    async for ev in session.run_turn(prompt):
        events.append(ev)
        if on_event is not None:
            on_event(ev)
    return events


def _live_sleeps(marker: str) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmd and state != "Z":
                pids.append(int(d.name))
    return pids


async def _sleeps_left_after(marker: str, within_s: float = 5.0) -> list[int]:
    """The matching processes still alive after ``within_s``: a SIGKILLed one needs to be
    scheduled once to die, which under load can come after the turn has reported its end; one
    that was never killed (these sleep for minutes) is still there."""
    deadline = time.monotonic() + within_s
    while (left := _live_sleeps(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return left


async def test_abort_mid_tool_answers_every_tool_use_and_conversation_continues(env: Path) -> None:
    scenario = Scenario.of(
        Turn(
            [
                tool_use("Bash", {"command": "sleep 777.5"}, id="t_slow"),
                tool_use("Glob", {"pattern": "*"}, id="t_queued"),
            ]
        ),
        Turn([text("ok, stopped")], match=Match(contains_text="what happened")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env, permission_mode="bypassPermissions")

        def on_event(ev: Any) -> None:
            if isinstance(ev, ToolStarted) and ev.tool_use_id == "t_slow":
                session.abort()

        events = await _collect(session, "run it", on_event)
        finished = events[-1]
        assert isinstance(finished, TurnFinished) and finished.stop_reason == "aborted"
        # The abort may stop the stream before the second block arrives: every tool_use that
        # made it into the conversation gets exactly one (error) result, and nothing else does.
        started = [e.tool_use_id for e in events if isinstance(e, ToolStarted)]
        results = [e for e in events if isinstance(e, ToolFinished)]
        assert "t_slow" in started
        assert sorted(r.tool_use_id for r in results) == sorted(started)
        assert all(r.is_error for r in results)
        assert await _sleeps_left_after("sleep 777.5") == []
        events2 = await _collect(session, "what happened?")
        assert isinstance(events2[-1], TurnFinished) and events2[-1].result_text == "ok, stopped"
        last = server.requests[-1].body["messages"]
        answered = {
            b["tool_use_id"]
            for m in last
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        }
        assert answered == set(started)
        await session.close()
        server.assert_done()


async def test_user_prompt_submit_hook_blocks_and_adds_context(env: Path) -> None:
    hook = env / "hook.sh"
    hook.write_text(
        "#!/bin/bash\n"
        "input=$(cat)\n"
        'if echo "$input" | grep -q secret; then echo "no secrets please" >&2; exit 2; fi\n'
        "echo 'Project codename: Falcon'\n"
    )
    hook.chmod(0o755)
    (env / ".nerve").mkdir()
    (env / ".nerve" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(hook)}]}]
                }
            }
        )
    )
    scenario = Scenario.of(Turn([text("Falcon it is")], match=Match(contains_text="Falcon")))
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        blocked = await _collect(session, "tell me the secret")
        assert any(isinstance(e, ErrorEvent) and "no secrets please" in e.message for e in blocked)
        assert blocked[-1].is_error and server.requests == []
        ok = await _collect(session, "what's the codename?")
        assert ok[-1].result_text == "Falcon it is"
        await session.close()
        server.assert_done()


async def test_stop_hook_sends_the_model_back_once(env: Path) -> None:
    flag = env / "stopped-once"
    hook = env / "stop.sh"
    hook.write_text(
        f"#!/bin/bash\nif [ -e {flag} ]; then exit 0; fi\ntouch {flag}\n"
        'echo \'{"decision": "block", "reason": "run the tests first"}\'\n'
    )
    hook.chmod(0o755)
    (env / ".nerve").mkdir()
    (env / ".nerve" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": str(hook)}]}]}})
    )
    scenario = Scenario.of(
        Turn([text("done")]),
        Turn([text("tests pass, really done")], match=Match(contains_text="run the tests first")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        events = await _collect(session, "work")
        assert events[-1].result_text == "tests pass, really done"
        assert any(isinstance(e, Notice) and "Stop hook" in e.text for e in events)
        await session.close()
        server.assert_done()


async def test_text_streams_as_deltas_and_usage_is_accounted(env: Path) -> None:
    scenario = Scenario.of(
        Turn([text("a fairly long answer in pieces")], input_tokens=100, output_tokens=20)
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        events = await _collect(session, "hi")
        deltas = [e.text for e in events if isinstance(e, TextDelta)]
        assert len(deltas) > 1 and "".join(deltas) == "a fairly long answer in pieces"
        fin = events[-1]
        assert fin.usage["input_tokens"] == 100 and fin.usage["output_tokens"] == 20
        assert fin.cost_usd > 0
        assert session.usage_summary()["output_tokens"] == 20
        await session.close()


async def test_session_start_hook_context_reaches_the_model_once(env: Path) -> None:
    hook = env / "start.sh"
    hook.write_text("#!/bin/bash\necho 'Today we work on the parser.'\n")
    hook.chmod(0o755)
    (env / ".nerve").mkdir()
    (env / ".nerve" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [
                        {"matcher": "startup", "hooks": [{"type": "command", "command": str(hook)}]}
                    ]
                }
            }
        )
    )
    scenario = Scenario.of(
        Turn(
            [text("parser, got it")],
            match=Match(predicate=lambda b: "work on the parser" in json.dumps(b["messages"])),
        ),
        Turn([text("still here")]),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        assert (await _collect(session, "hi"))[-1].result_text == "parser, got it"
        assert (await _collect(session, "again"))[-1].result_text == "still here"
        second = json.dumps(server.requests[1].body["messages"])
        assert second.count("work on the parser") == 1
        await session.close()
        server.assert_done()


async def test_a_mode_change_during_a_batch_survives_the_batch(env: Path) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Glob", {"pattern": "*"}, id="g1")]),
        Turn([text("listed")], match=Match(tool_result_for="g1")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)

        def on_event(ev: Any) -> None:
            if isinstance(ev, ToolStarted):
                session.set_mode("acceptEdits")  # Shift+Tab while the tool runs

        events = await _collect(session, "list", on_event)
        assert events[-1].result_text == "listed"
        assert session.mode == "acceptEdits"
        await session.close()
        server.assert_done()
