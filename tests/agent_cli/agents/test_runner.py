"""Sub-agents end to end: a real AgentSession, the real SDK, the scripted server on loopback.

The server serves turns in order across the parent's and the child's requests; each turn's
``Match`` checks by the system prompt whose request it is.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.loop.events import ToolFinished, ToolProgress, TurnFinished
from agent_cli.model.config import MODEL_ALIASES
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.loop.test_agent_loop import (  # noqa: F401  (fixture)
    _collect,
    _live_sleeps,
    _sleeps_left_after,
    env,
)
from tools.context import PermissionAnswer, PermissionPrompt, PermissionResponse

CHILD_MARK = "# Your role: sub-agent"
SLOW = "python3 -c 'import time; time.sleep(778.5)'"


def _system(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, Mapping))
    return str(system or "")


def _tool_names(body: Mapping[str, Any]) -> set[str]:
    return {t["name"] for t in body.get("tools", [])}


def child(**kw: Any) -> Match:
    return Match(predicate=lambda b: CHILD_MARK in _system(b), description="child request", **kw)


def parent(**kw: Any) -> Match:
    return Match(
        predicate=lambda b: CHILD_MARK not in _system(b), description="parent request", **kw
    )


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _blocks(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    out = []
    for rec in records:
        if rec.get("streaming"):
            continue  # a call recorded as it was handed out; the complete message repeats it
        content = rec.get("message", {}).get("content")
        if isinstance(content, list):
            out += [b for b in content if isinstance(b, dict) and b.get("type") == kind]
    return out


async def test_agent_runs_a_child_with_bubbled_permission_and_a_sidechain(env: Path) -> None:  # noqa: F811
    notes = env / "notes.txt"
    notes.write_text("alpha\nbeta\n")
    task = "Read notes.txt, then write child.txt with a summary. Report what you did."
    scenario = Scenario.of(
        Turn(
            [
                text("I'll delegate this."),
                tool_use("Agent", {"description": "summarise notes", "prompt": task}, id="ag1"),
            ],
            match=parent(),
        ),
        Turn(
            [tool_use("Read", {"file_path": str(notes)}, id="c_read")],
            match=child(contains_text=task),
        ),
        Turn(
            [tool_use("Bash", {"command": "printf 'two notes\\n' > child.txt"}, id="c_bash")],
            match=child(tool_result_for="c_read"),
        ),
        Turn(
            [text("notes.txt has 2 lines; wrote child.txt")],
            match=child(tool_result_for="c_bash"),
            input_tokens=40,
            output_tokens=7,
        ),
        Turn([text("The sub-agent wrote child.txt.")], match=parent(tool_result_for="ag1")),
    )
    seen: list[PermissionPrompt] = []

    async def handler(prompt: PermissionPrompt) -> PermissionResponse:
        seen.append(prompt)
        return PermissionResponse(PermissionAnswer.ALLOW)

    with ScriptedServer(scenario) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(), cwd=env)
        session.set_permission_handler(handler)
        events = await _collect(session, "summarise my notes")
        server.assert_done()
        await session.close()

    finished = events[-1]
    assert isinstance(finished, TurnFinished) and not finished.is_error, events
    assert finished.result_text == "The sub-agent wrote child.txt."
    # The bubbled prompt: the child's Bash, naming the agent; approving it ran the command.
    assert [p.tool_name for p in seen] == ["Bash"]
    assert "sub-agent general-purpose: summarise notes" in seen[0].title
    agent_id = seen[0].agent_id
    assert agent_id
    assert (env / "child.txt").read_text() == "two notes\n"
    # Progress: the child's steps reached the parent's Agent call.
    steps = [e.text for e in events if isinstance(e, ToolProgress) and e.tool_use_id == "ag1"]
    assert any("Read(" in s for s in steps) and any("Bash(" in s for s in steps)
    result = next(e for e in events if isinstance(e, ToolFinished) and e.tool_use_id == "ag1")
    assert not result.is_error
    assert str(result.content).startswith("notes.txt has 2 lines; wrote child.txt")
    assert "2 tool uses" in str(result.content)

    # The child's requests: no Agent, no plan tools; its own conversation only.
    child_reqs = [r for r in server.requests if CHILD_MARK in _system(r.body)]
    assert len(child_reqs) == 3
    names = _tool_names(child_reqs[0].body)
    assert {"Read", "Bash"} <= names
    assert not names & {"Agent", "EnterPlanMode", "ExitPlanMode"}
    first = child_reqs[0].body["messages"]
    assert len(first) == 1 and first[0]["role"] == "user"
    assert [b["text"] for b in first[0]["content"]] == [task]
    assert "Agent" in _tool_names(server.requests[0].body)

    # The sidechain: every line marked, the child's tool calls and results inside.
    assert session.transcript is not None
    side = session.transcript.session_dir / "subagents" / f"agent-{agent_id}.jsonl"
    side_records = _records(side)
    envelope = [r for r in side_records if r["type"] in ("user", "assistant")]
    assert envelope and all(r["isSidechain"] is True for r in envelope)
    assert all(r["agentId"] == agent_id for r in envelope)
    assert all(r["sessionId"] == session.session_id for r in side_records)
    assert [b["name"] for b in _blocks(side_records, "tool_use")] == ["Read", "Bash"]
    assert {b["tool_use_id"] for b in _blocks(side_records, "tool_result")} == {"c_read", "c_bash"}
    # The parent's transcript: only the Agent call and its result.
    main = _records(session.transcript.path)
    assert [b["name"] for b in _blocks(main, "tool_use")] == ["Agent"]
    assert [b["tool_use_id"] for b in _blocks(main, "tool_result")] == ["ag1"]
    assert not any(r.get("isSidechain") for r in main if "isSidechain" in r)
    output = next(r["toolUseResult"]["output"] for r in main if "toolUseResult" in r)
    assert output["agent_id"] == agent_id and output["transcript_path"] == str(side)
    # The child's usage is in the session's totals (parent 2 requests + child 3).
    assert session.loop.usage.turns == 5


async def test_esc_during_the_childs_tool_stops_child_and_parent_cleanly(env: Path) -> None:  # noqa: F811
    scenario = Scenario.of(
        Turn(
            [tool_use("Agent", {"description": "slow job", "prompt": "run it"}, id="ag2")],
            match=parent(),
        ),
        Turn([tool_use("Bash", {"command": SLOW}, id="c_sleep")], match=child()),
        Turn([text("stopped")], match=parent(contains_text="what happened")),
    )
    with ScriptedServer(scenario) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(permission_mode="bypassPermissions"), cwd=env)

        async def press_esc_when_sleeping() -> None:
            for _ in range(500):
                if _live_sleeps("time.sleep(778.5)"):
                    session.abort()
                    return
                await asyncio.sleep(0.01)
            raise AssertionError("the child's command never started")

        esc = asyncio.ensure_future(press_esc_when_sleeping())
        events = await asyncio.wait_for(_collect(session, "go"), 20)
        await esc
        finished = events[-1]
        assert isinstance(finished, TurnFinished) and finished.stop_reason == "aborted"
        result = next(e for e in events if isinstance(e, ToolFinished) and e.tool_use_id == "ag2")
        assert result.is_error
        assert await _sleeps_left_after("time.sleep(778.5)") == []

        events2 = await _collect(session, "what happened?")
        assert isinstance(events2[-1], TurnFinished) and events2[-1].result_text == "stopped"
        server.assert_done()
        await session.close()

    # The parent's conversation answered its Agent call.
    last = server.requests[-1].body["messages"]
    answered = {
        b["tool_use_id"]
        for m in last
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    assert answered == {"ag2"}
    # The child's conversation answered its Bash call too (in its sidechain).
    assert session.transcript is not None
    sides = list((session.transcript.session_dir / "subagents").glob("agent-*.jsonl"))
    assert len(sides) == 1
    side_records = _records(sides[0])
    assert [b["id"] for b in _blocks(side_records, "tool_use")] == ["c_sleep"]
    results = _blocks(side_records, "tool_result")
    assert [b["tool_use_id"] for b in results] == ["c_sleep"] and results[0].get("is_error")


async def test_custom_agent_narrows_tools_and_model_and_explore_cannot_write(env: Path) -> None:  # noqa: F811
    agents = env / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep, Write\n"
        "model: haiku\npermissionMode: plan\n---\nYou are a meticulous reviewer.\n"
    )
    target = env / "review.txt"
    scenario = Scenario.of(
        Turn(
            [
                tool_use(
                    "Agent",
                    {"description": "review it", "prompt": "review", "subagent_type": "reviewer"},
                    id="ag3",
                )
            ],
            match=parent(),
        ),
        Turn(
            [tool_use("Write", {"file_path": str(target), "content": "x"}, id="c_w")],
            match=child(),
        ),
        Turn([text("could not write: plan mode")], match=child(tool_result_for="c_w")),
        Turn([text("ok")], match=parent(tool_result_for="ag3")),
    )
    prompts: list[PermissionPrompt] = []

    async def handler(prompt: PermissionPrompt) -> PermissionResponse:
        prompts.append(prompt)
        return PermissionResponse(PermissionAnswer.ALLOW)

    with ScriptedServer(scenario) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(), cwd=env)
        session.set_permission_handler(handler)
        events = await _collect(session, "review my code")
        server.assert_done()
        await session.close()

    assert isinstance(events[-1], TurnFinished) and events[-1].result_text == "ok"
    assert "- reviewer: Reviews code for bugs" in _system(server.requests[0].body)
    child_req = server.requests[1].body
    assert _tool_names(child_req) == {"Read", "Grep", "Write"}
    assert child_req["model"] == MODEL_ALIASES["haiku"]
    assert "You are a meticulous reviewer." in _system(child_req)
    # permissionMode: plan — the child's Write is refused without asking anyone.
    assert prompts == [] and not target.exists()
    refused = server.requests[2].body["messages"][-1]["content"][0]
    assert refused["tool_use_id"] == "c_w" and refused.get("is_error")
    assert "plan mode" in str(refused["content"])


async def test_enter_and_exit_plan_mode_in_a_session_are_recorded(env: Path) -> None:  # noqa: F811
    plan = "1. Write a.txt"
    scenario = Scenario.of(
        Turn([tool_use("EnterPlanMode", {}, id="p_in")]),
        Turn(
            [tool_use("Write", {"file_path": str(env / "a.txt"), "content": "a"}, id="p_w")],
            match=Match(tool_result_for="p_in"),
        ),
        Turn(
            [tool_use("ExitPlanMode", {"plan": plan}, id="p_out")],
            match=Match(tool_result_for="p_w"),
        ),
        Turn(
            [tool_use("Write", {"file_path": str(env / "a.txt"), "content": "a"}, id="p_w2")],
            match=Match(tool_result_for="p_out"),
        ),
        Turn([text("done")], match=Match(tool_result_for="p_w2")),
    )
    seen: list[PermissionPrompt] = []

    async def handler(prompt: PermissionPrompt) -> PermissionResponse:
        seen.append(prompt)
        return PermissionResponse(PermissionAnswer.ALLOW)

    with ScriptedServer(scenario) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(permission_mode="acceptEdits"), cwd=env)
        session.set_permission_handler(handler)
        events = await _collect(session, "plan then write")
        server.assert_done()
        await session.close()

    assert isinstance(events[-1], TurnFinished) and events[-1].result_text == "done"
    # Only the plan was shown to the user; acceptEdits came back, so the second Write ran.
    assert [p.tool_name for p in seen] == ["ExitPlanMode"] and seen[0].preview == plan
    denied = server.requests[2].body["messages"][-1]["content"][0]
    assert denied["tool_use_id"] == "p_w" and denied.get("is_error")
    assert (env / "a.txt").read_text() == "a"
    assert session.mode == "acceptEdits"
    assert session.transcript is not None
    modes = [r["mode"] for r in _records(session.transcript.path) if r["type"] == "permission-mode"]
    assert modes == ["acceptEdits", "plan", "acceptEdits"]


async def test_hooks_in_a_child_subagent_stop_not_stop_and_no_prompt_submit(env: Path) -> None:  # noqa: F811
    log = env / "hooks.log"
    hook = env / "hook.sh"
    hook.write_text(f'#!/bin/bash\necho "$(cat)" >> {log}\n')
    hook.chmod(0o755)
    command = [{"hooks": [{"type": "command", "command": str(hook)}]}]
    events_config = ("UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "PreToolUse")
    (env / ".nerve").mkdir()
    context = {
        "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "CTX42"}
    }
    start_context = {"type": "command", "command": f"echo '{json.dumps(context)}'"}
    hooks_config = {name: command for name in events_config}
    hooks_config["SubagentStart"] = [{"hooks": [command[0]["hooks"][0], start_context]}]
    (env / ".nerve" / "settings.json").write_text(json.dumps({"hooks": hooks_config}))
    scenario = Scenario.of(
        Turn(
            [tool_use("Agent", {"description": "look", "prompt": "look around"}, id="ag4")],
            match=parent(),
        ),
        Turn([tool_use("Glob", {"pattern": "*.sh"}, id="c_glob")], match=child()),
        Turn([text("found hook.sh")], match=child(tool_result_for="c_glob")),
        Turn([text("done")], match=parent(tool_result_for="ag4")),
    )
    with ScriptedServer(scenario) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(), cwd=env)
        events = await _collect(session, "look")
        server.assert_done()
        await session.close()
    assert isinstance(events[-1], TurnFinished) and events[-1].result_text == "done"
    fired = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    names = [f["hook_event_name"] for f in fired]
    # The child's Glob runs the PreToolUse hook (policy applies to sub-agents too); its end is
    # SubagentStop; the child's task is not a user prompt.
    assert names.count("UserPromptSubmit") == 1 and names.count("Stop") == 1
    assert names.count("SubagentStop") == 1 and names.count("SubagentStart") == 1
    assert names.index("SubagentStart") < names.index("SubagentStop")
    assert [f["tool_name"] for f in fired if f["hook_event_name"] == "PreToolUse"] == [
        "Agent",
        "Glob",
    ]
    stop = next(f for f in fired if f["hook_event_name"] == "SubagentStop")
    assert stop["agent_type"] == "general-purpose" and stop["agent_id"]
    assert Path(stop["agent_transcript_path"]).exists()
    # the SubagentStart hook's context is in the child's task, not in the parent's conversation
    child_task = json.dumps(server.requests[1].body["messages"][0])
    assert "look around" in child_task and "CTX42" in child_task
    assert "CTX42" not in json.dumps(server.requests[-1].body["messages"][:2])
    start = next(f for f in fired if f["hook_event_name"] == "SubagentStart")
    assert start["agent_type"] == "general-purpose" and start["agent_id"] == stop["agent_id"]


async def test_print_mode_denies_a_childs_ask_and_the_child_reports_it(env: Path) -> None:  # noqa: F811
    scenario = Scenario.of(
        Turn(
            [tool_use("Agent", {"description": "touch", "prompt": "make a file"}, id="ag5")],
            match=parent(),
        ),
        Turn([tool_use("Bash", {"command": "touch made.txt"}, id="c_t")], match=child()),
        Turn([text("I was not allowed to run touch")], match=child(tool_result_for="c_t")),
        Turn([text("the sub-agent was blocked")], match=parent(tool_result_for="ag5")),
    )
    with ScriptedServer(scenario) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(), cwd=env)  # no handler: non-interactive
        events = await _collect(session, "make a file")
        server.assert_done()
        await session.close()
    assert isinstance(events[-1], TurnFinished) and not events[-1].is_error
    assert not (env / "made.txt").exists()
    denial = server.requests[2].body["messages"][-1]["content"][0]
    assert denial["tool_use_id"] == "c_t" and denial.get("is_error")
    assert "non-interactively" in str(denial["content"])
