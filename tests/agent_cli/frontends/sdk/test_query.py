"""Anthropic's Agent SDK (``claude-agent-sdk``, the real package) drives ``nerve`` as its CLI,
over the scripted API: a plain ``query()``, a custom system prompt, ``max_turns``, and a
``ClaudeSDKClient`` conversation of two turns in one session."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

# a command that runs until interrupted (a standalone `sleep` is refused before it runs)
SLOW = "python3 -c 'import time; time.sleep(888)'"
__all__ = ["harness"]


def options(harness: Harness, server: ScriptedServer, **kw: Any) -> Any:
    return sdk.ClaudeAgentOptions(
        cli_path=NERVE, cwd=str(harness.project), env=harness.env_for(server), **kw
    )


async def collect(prompt: str, opts: Any) -> list[Any]:
    return [m async for m in sdk.query(prompt=prompt, options=opts)]


async def test_a_plain_query_with_a_custom_system_prompt(harness: Harness) -> None:
    server = harness.server(Scenario.of(Turn([text("Hello from Nerve.")])))
    try:
        got = await collect("say hello", options(harness, server, system_prompt="You are terse."))
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    init, answer, result = got
    assert isinstance(init, sdk.SystemMessage) and init.subtype == "init"
    assert init.data["cwd"] == str(harness.project) and "Read" in init.data["tools"]
    assert isinstance(answer, sdk.AssistantMessage)
    assert answer.content == [sdk.TextBlock(text="Hello from Nerve.")]
    assert isinstance(result, sdk.ResultMessage)
    assert result.subtype == "success" and not result.is_error and result.num_turns == 1
    assert result.result == "Hello from Nerve." and result.session_id == init.data["session_id"]
    body = server.requests[0].body
    system = json.dumps(body["system"])
    assert "You are terse." in system and "You are Nerve" not in system
    assert "say hello" in json.dumps(body["messages"][0])


async def test_no_system_prompt_keeps_nerves_and_max_turns_stops_the_loop(
    harness: Harness,
) -> None:
    glob = tool_use("Glob", {"pattern": "*"}, id="g1")
    server = harness.server(Scenario.of(Turn([glob])))
    got: list[Any] = []
    try:
        # An error result makes nerve exit 1, as Claude Code does; the SDK yields the result,
        # then raises ResultError naming it.
        with pytest.raises(sdk.ResultError, match=r"Reached maximum number of turns \(1\)"):
            async for message in sdk.query(
                prompt="list files forever", options=options(harness, server, max_turns=1)
            ):
                got.append(message)
    finally:
        server.stop()
    assert server.failures == [], server.failures
    assert "You are Nerve" in json.dumps(server.requests[0].body["system"])
    result = got[-1]
    assert isinstance(result, sdk.ResultMessage)
    assert result.subtype == "error_max_turns" and result.is_error and result.num_turns == 1
    assert result.terminal_reason == "max_turns" and result.stop_reason == "tool_use"
    tools = [b for m in got if isinstance(m, sdk.AssistantMessage) for b in m.content]
    assert [b.name for b in tools if isinstance(b, sdk.ToolUseBlock)] == ["Glob"]
    results = [b for m in got if isinstance(m, sdk.UserMessage) for b in m.content]
    assert [b.tool_use_id for b in results if isinstance(b, sdk.ToolResultBlock)] == ["g1"]


async def test_a_client_conversation_keeps_one_session(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([text("First answer.")]),
        Turn([text("Second answer.")], match=Match(contains_text="and then?")),
    )
    server = harness.server(scenario)
    try:
        async with sdk.ClaudeSDKClient(options=options(harness, server)) as client:
            await client.query("first question")
            first = [m async for m in client.receive_response()]
            await client.query("and then?")
            second = [m async for m in client.receive_response()]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert first[-1].result == "First answer." and second[-1].result == "Second answer."
    assert first[-1].session_id == second[-1].session_id
    history = json.dumps(server.requests[1].body["messages"])
    assert "first question" in history and "First answer." in history


async def test_the_sdks_control_requests_interrupt_mode_model_and_mcp_status(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": SLOW}, id="t_slow")]),
        Turn([text("Stopped, as asked.")], match=Match(contains_text="and now?")),
    )
    server = harness.server(scenario)
    opts = options(harness, server, permission_mode="bypassPermissions")
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            assert await client.get_mcp_status() == {"mcpServers": []}
            await client.query("wait a long time")
            first: list[Any] = []
            async for message in client.receive_response():
                first.append(message)
                if isinstance(message, sdk.AssistantMessage) and any(
                    isinstance(b, sdk.ToolUseBlock) for b in message.content
                ):
                    await client.interrupt()  # the sleep is running now
            await client.set_model("haiku")
            await client.set_permission_mode("acceptEdits")
            await client.query("and now?")
            second = [m async for m in client.receive_response()]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    stopped = first[-1]
    assert isinstance(stopped, sdk.ResultMessage) and stopped.is_error
    assert stopped.terminal_reason == "aborted_tools"  # the SDK's: an interrupt stopped tools
    results = [b for m in first if isinstance(m, sdk.UserMessage) for b in m.content]
    assert [b.tool_use_id for b in results] == ["t_slow"]
    assert second[-1].result == "Stopped, as asked."
    init = second[0]
    assert isinstance(init, sdk.SystemMessage) and init.data["permissionMode"] == "acceptEdits"
    assert "haiku" in server.requests[1].body["model"]
    assert "haiku" not in server.requests[0].body["model"]
