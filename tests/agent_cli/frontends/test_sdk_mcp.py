"""In-process SDK MCP servers with the real Agent SDK: ``create_sdk_mcp_server`` ``@tool``
functions join the tool pool, each call travels as an ``mcp_message`` control request
through the whole pipeline (permission rules, ``can_use_tool``) and its result reaches the
model; outside the SDK mode such a server is reported unavailable."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

__all__ = ["harness"]

ADD = "mcp__calc__add"


def _result_of(tool_use_id: str, body: Any) -> str:
    """The text of the request's tool_result for ``tool_use_id`` ("" when there is none)."""
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                return json.dumps(block.get("content"))
    return ""


def _has_result(tool_use_id: str, needle: str) -> Match:
    return Match(
        tool_result_for=tool_use_id,
        predicate=lambda body: needle in _result_of(tool_use_id, body),
        description=f"the result of {tool_use_id} contains {needle!r}",
    )


def calc_server() -> Any:
    @sdk.tool("add", "Add two integers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    @sdk.tool("explode", "Always fails", {"why": str})
    async def explode(args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError(f"boom: {args['why']}")

    return sdk.create_sdk_mcp_server("calc", tools=[add, explode])


def _options(harness: Harness, server: Any, **kw: Any) -> Any:
    return sdk.ClaudeAgentOptions(
        cli_path=NERVE,
        cwd=str(harness.project),
        env=harness.env_for(server),
        mcp_servers={"calc": calc_server()},
        **kw,
    )


async def _run(options: Any, prompt: str) -> tuple[list[Any], dict[str, Any]]:
    async with sdk.ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        got = [m async for m in client.receive_response()]
        status = await client.get_mcp_status()
    return got, dict(status)


def _results(got: list[Any]) -> dict[str, Any]:
    return {
        b.tool_use_id: b
        for m in got
        if isinstance(m, sdk.UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, sdk.ToolResultBlock)
    }


async def test_an_allowed_sdk_tool_runs_in_process_and_a_raising_one_is_an_error(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use(ADD, {"a": 2, "b": 3}, id="t1")]),
        Turn([tool_use("mcp__calc__explode", {"why": "x"}, id="t2")], match=_has_result("t1", "5")),
        Turn([text("2 + 3 = 5")], match=_has_result("t2", "boom: x")),
    )
    server = harness.server(scenario)
    opts = _options(harness, server, allowed_tools=[ADD, "mcp__calc__explode"])
    try:
        got, status = await _run(opts, "add 2 and 3")
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    results = _results(got)
    assert not results["t1"].is_error and "5" in json.dumps(results["t1"].content)
    assert results["t2"].is_error and "boom: x" in json.dumps(results["t2"].content)
    result = got[-1]
    assert isinstance(result, sdk.ResultMessage) and result.result == "2 + 3 = 5"
    assert not result.is_error
    calc = [s for s in status["mcpServers"] if s["name"] == "calc"]
    assert calc and calc[0]["status"] == "connected", status


def test_print_mode_reports_an_sdk_server_unavailable_and_goes_on(harness: Harness) -> None:
    config = json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
    run = harness.run(
        ["-p", "--mcp-config", config, "hello"], Scenario.of(Turn([text("Hi there.")]))
    )
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "Hi there."
    assert "MCP server calc failed to start" in run.stderr
    assert "only when the Agent SDK drives nerve" in run.stderr
    assert "Traceback" not in run.stderr


def test_an_sdk_server_in_a_project_file_is_skipped(harness: Harness) -> None:
    (harness.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}})
    )
    done = subprocess.run(
        [NERVE, "mcp", "list"],
        cwd=harness.project,
        env=harness.env_for(None),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "No MCP servers configured" in done.stdout
    assert "an sdk server can only come from --mcp-config; skipped" in done.stderr


async def test_an_sdk_tool_call_asks_can_use_tool_first(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use(ADD, {"a": 1, "b": 1}, id="t1")]),
        Turn([tool_use(ADD, {"a": 4, "b": 4}, id="t2")], match=_has_result("t1", "2")),
        Turn([text("done")], match=_has_result("t2", "no adding")),
    )
    server = harness.server(scenario)
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, tool_input))
        if tool_input["a"] == 1:
            return sdk.PermissionResultAllow()
        return sdk.PermissionResultDeny(message="no adding")

    try:
        got, _ = await _run(_options(harness, server, can_use_tool=can_use_tool), "add")
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert asked == [(ADD, {"a": 1, "b": 1}), (ADD, {"a": 4, "b": 4})]
    results = _results(got)
    assert not results["t1"].is_error and results["t2"].is_error
