"""The Agent SDK's (the real ``claude-agent-sdk``) context and session requests against
``nerve`` over the scripted API: ``get_context_usage()``, ``rewind_files()`` with the prompt
uuids ``--replay-user-messages`` gives, and ``resume`` / ``continue_conversation`` /
``fork_session``; bad context requests over raw stdin; the README's five-line example."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness
from tests.agent_cli.frontends.sdk.test_protocol import SDK_ARGS, Pipe, control, response_to, user
from tests.agent_cli.frontends.sdk.test_query import collect, options

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

__all__ = ["harness"]


def history(server: ScriptedServer, index: int) -> str:
    return json.dumps(server.requests[index].body["messages"])


async def test_get_context_usage_has_the_sdks_shape_after_a_turn(harness: Harness) -> None:
    server = harness.server(Scenario.of(Turn([text("A fine answer. " * 40)])))
    try:
        async with sdk.ClaudeSDKClient(options=options(harness, server)) as client:
            await client.query("tell me something " * 30)
            [m async for m in client.receive_response()]
            usage = await client.get_context_usage()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    for key in ("categories", "totalTokens", "maxTokens", "rawMaxTokens", "percentage"):
        assert key in usage, usage
    for key in ("model", "isAutoCompactEnabled", "memoryFiles", "mcpTools", "agents", "gridRows"):
        assert key in usage, usage
    by_name = {c["name"]: c for c in usage["categories"]}
    for name in ("System prompt", "System tools", "Messages", "Free space"):
        assert isinstance(by_name[name]["tokens"], int) and isinstance(by_name[name]["color"], str)
    assert by_name["System prompt"]["tokens"] > 100 and by_name["System tools"]["tokens"] > 100
    assert by_name["Messages"]["tokens"] > 60  # the prompt and the answer both count
    assert usage["rawMaxTokens"] == 200_000 and 0 < usage["maxTokens"] <= 200_000
    assert 0 < usage["totalTokens"] < usage["rawMaxTokens"]
    assert usage["percentage"] == pytest.approx(100 * usage["totalTokens"] / 200_000, abs=0.1)
    names = [t["name"] for t in usage["systemTools"]]
    assert "Read" in names and "Edit" in names
    assert usage["isAutoCompactEnabled"] is True
    assert usage["autoCompactThreshold"] == usage["maxTokens"] < usage["rawMaxTokens"]


async def test_rewind_files_restores_an_edit_made_after_that_prompt(harness: Harness) -> None:
    target = harness.project / "notes.txt"
    target.write_text("original line\n")
    edit = {"file_path": str(target), "old_string": "original", "new_string": "edited"}
    scenario = Scenario.of(
        Turn([text("Nothing to change yet.")]),
        Turn(
            [tool_use("Read", {"file_path": str(target)}, id="r")],
            match=Match(contains_text="edit it"),
        ),
        Turn([tool_use("Edit", edit, id="e")], match=Match(tool_result_for="r")),
        Turn([text("Edited.")], match=Match(tool_result_for="e")),
    )
    server = harness.server(scenario)
    opts = options(
        harness,
        server,
        permission_mode="acceptEdits",
        enable_file_checkpointing=True,
        extra_args={"replay-user-messages": None},
    )
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            await client.query("look around")
            first = [m async for m in client.receive_response()]
            await client.query("edit it")
            second = [m async for m in client.receive_response()]
            assert target.read_text() == "edited line\n"
            prompts = [
                m
                for m in second
                if isinstance(m, sdk.UserMessage) and isinstance(m.content, str) and m.uuid
            ]
            assert [m.content for m in prompts] == ["edit it"]
            await client.rewind_files(prompts[0].uuid)
            restored = target.read_text()
            with pytest.raises(Exception, match="no prompt 'nope'"):
                await client.rewind_files("nope")
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert restored == "original line\n"
    replayed = [m for m in first if isinstance(m, sdk.UserMessage)]
    assert [m.content for m in replayed] == ["look around"] and replayed[0].uuid
    # the uuid is the prompt's transcript record: a resumed session knows it too
    (transcript,) = harness.transcripts()
    records = [json.loads(x) for x in transcript.read_text().splitlines()]
    assert prompts[0].uuid in {r.get("uuid") for r in records if r.get("type") == "user"}


async def test_resume_continue_and_fork_session_from_the_sdk(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([text("The answer is 41.")]),
        Turn([text("Resumed.")], match=Match(contains_text="resume me")),
        Turn([text("Continued.")], match=Match(contains_text="continue me")),
        Turn([text("Forked.")], match=Match(contains_text="fork me")),
    )
    server = harness.server(scenario)
    try:
        first = await collect("what is the answer?", options(harness, server))
        sid = first[-1].session_id
        resumed = await collect("resume me", options(harness, server, resume=sid))
        continued = await collect(
            "continue me", options(harness, server, continue_conversation=True)
        )
        forked = await collect("fork me", options(harness, server, resume=sid, fork_session=True))
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert resumed[-1].result == "Resumed." and resumed[-1].session_id == sid
    assert "what is the answer?" in history(server, 1) and "41" in history(server, 1)
    assert continued[-1].result == "Continued." and continued[-1].session_id == sid
    assert "resume me" in history(server, 2) and "Resumed." in history(server, 2)
    assert forked[-1].result == "Forked." and forked[-1].session_id != sid
    assert "continue me" in history(server, 3) and "41" in history(server, 3)
    assert len(harness.transcripts()) == 2  # the fork wrote a file of its own


def readme_sdk_example() -> str:
    readme = (Path(__file__).parents[4] / "README.md").read_text(encoding="utf-8")
    after = readme[readme.index("Anthropic's Agent SDK drives Nerve") :]
    start = after.index("```python\n") + len("```python\n")
    return after[start : after.index("\n```", start)]


async def test_the_readmes_python_example_runs(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = harness.server(Scenario.of(Turn([text("It is a demo project.")])))
    env = harness.env_for(server)
    env["PATH"] = f"{Path(NERVE).parent}{os.pathsep}{env.get('PATH', '')}"  # cli_path="nerve"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(harness.project)
    code = readme_sdk_example()
    assert len(code.strip().splitlines()) <= 6 and 'cli_path="nerve"' in code
    scope: dict[str, Any] = {}
    try:
        exec(compile(code, "README.md", "exec"), scope)
        await scope["main"]()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    printed = capsys.readouterr().out
    assert "It is a demo project." in printed and "ResultMessage(" in printed
    assert "Be terse." in json.dumps(server.requests[0].body["system"])


def test_context_requests_with_bad_input_answer_errors_and_the_session_goes_on(
    harness: Harness,
) -> None:
    server = harness.server(Scenario.of(Turn([text("still fine")])))
    try:
        pipe = Pipe(harness, server, [*SDK_ARGS, "--replay-user-messages"])
        pipe.send(
            control("u1", "get_context_usage"),
            control("r1", "rewind_files"),
            control("r2", "rewind_files", user_message_id="no-such-prompt"),
            json.dumps({"type": "control_request", "request_id": "r3", "request": "rewind"}),
        )
        answers = {}
        for rid in ("u1", "r1", "r2", "r3"):
            answers[rid] = pipe.until(response_to(rid))[-1]["response"]
        pipe.send(user("still there?"))
        frames = pipe.until(lambda f: f["type"] == "result")
        rc, _, err = pipe.close()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    before = answers["u1"]
    assert before["subtype"] == "success" and before["response"]["totalTokens"] > 0
    assert answers["r1"]["subtype"] == "error" and "user_message_id" in answers["r1"]["error"]
    assert answers["r2"]["subtype"] == "error" and "no-such-prompt" in answers["r2"]["error"]
    assert answers["r3"]["subtype"] == "error" and '"request" object' in answers["r3"]["error"]
    replay = [f for f in frames if f["type"] == "user"]
    assert [f["message"]["content"] for f in replay] == ["still there?"] and replay[0]["uuid"]
    assert frames[-1]["result"] == "still fine" and rc == 0 and "Traceback" not in err, err


async def test_rewind_files_works_in_a_resumed_session(harness: Harness) -> None:
    target = harness.project / "notes.txt"
    target.write_text("original line\n")
    edit = {"file_path": str(target), "old_string": "original", "new_string": "edited"}
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(target)}, id="r")]),
        Turn([tool_use("Edit", edit, id="e")], match=Match(tool_result_for="r")),
        Turn([text("Edited.")], match=Match(tool_result_for="e")),
    )
    server = harness.server(scenario)
    replay = {"replay-user-messages": None}
    try:
        first = await collect(
            "edit it",
            options(harness, server, permission_mode="acceptEdits", extra_args=replay),
        )
        (prompt,) = [
            m for m in first if isinstance(m, sdk.UserMessage) and isinstance(m.content, str)
        ]
        assert target.read_text() == "edited line\n"
        opts = options(harness, server, resume=first[-1].session_id, extra_args=replay)
        async with sdk.ClaudeSDKClient(options=opts) as client:
            await client.rewind_files(prompt.uuid)
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert target.read_text() == "original line\n"
