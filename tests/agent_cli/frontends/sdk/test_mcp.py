"""In-process SDK MCP servers with the real Agent SDK: ``create_sdk_mcp_server`` ``@tool``
functions join the tool pool, each call travels as an ``mcp_message`` control request
through the whole pipeline (permission rules, ``can_use_tool``) and its result reaches the
model; outside the SDK mode such a server is reported unavailable."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)
PermissionRuleValue = sdk.types.PermissionRuleValue

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


async def _run(server: Any, options: Any, prompt: str) -> tuple[list[Any], dict[str, Any]]:
    """One prompt through the SDK; the scripted server is stopped and checked (every step
    consumed, none unexpected). Returns the messages and ``get_mcp_status()``."""
    try:
        async with sdk.ClaudeSDKClient(options=options) as client:
            await client.query(prompt)
            got = [m async for m in client.receive_response()]
            status = await client.get_mcp_status()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
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
    got, status = await _run(server, opts, "add 2 and 3")
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

    got, _ = await _run(server, _options(harness, server, can_use_tool=can_use_tool), "add")
    assert asked == [(ADD, {"a": 1, "b": 1}), (ADD, {"a": 4, "b": 4})]
    results = _results(got)
    assert not results["t1"].is_error and results["t2"].is_error


def _rules(updates: list[Any]) -> list[tuple[str, str | None, str | None]]:
    return [(r.tool_name, r.rule_content, u.destination) for u in updates for r in (u.rules or [])]


async def test_always_allow_for_the_session_makes_the_next_identical_call_not_ask(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use(ADD, {"a": 1, "b": 2}, id="t1")]),
        Turn([tool_use(ADD, {"a": 1, "b": 2}, id="t2")], match=_has_result("t1", "3")),
        Turn([text("done")], match=_has_result("t2", "3")),
    )
    server = harness.server(scenario)
    suggested: list[Any] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        suggested.append(context.suggestions)
        # The usual SDK pattern: "always allow" is the suggestions, as they came.
        return sdk.PermissionResultAllow(updated_permissions=context.suggestions)

    got, _ = await _run(server, _options(harness, server, can_use_tool=can_use_tool), "add twice")
    assert len(suggested) == 1  # the second call matched the session rule
    assert _rules(suggested[0]) == [(ADD, None, "session")]
    assert suggested[0][0].behavior == "allow" and suggested[0][0].type == "addRules"
    assert not (harness.project / ".claude" / "settings.local.json").exists()
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "done"


async def test_always_allow_to_local_settings_saves_the_suggested_bash_rule(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "python3 calc.py 6 7"}, id="b1")]),
        Turn(
            [tool_use("Bash", {"command": "python3 calc.py 6 8"}, id="b2")],
            match=_has_result("b1", "42"),
        ),
        Turn([text("done")], match=_has_result("b2", "48")),
    )
    server = harness.server(scenario)
    suggested: list[Any] = []
    script = "import sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n"
    (harness.project / "calc.py").write_text(script)

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        suggested.append(context.suggestions)
        saved = [replace(u, destination="localSettings") for u in context.suggestions]
        return sdk.PermissionResultAllow(updated_permissions=saved)

    got, _ = await _run(server, _options(harness, server, can_use_tool=can_use_tool), "python")
    assert len(suggested) == 1
    assert _rules(suggested[0]) == [("Bash", "python3 calc.py *", "session")]
    local = json.loads((harness.project / ".claude" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(python3 calc.py *)"]
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "done"


async def test_a_deny_rule_still_beats_an_allow_the_sdk_added(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch a.txt"}, id="b1")]),
        Turn(
            [tool_use("Bash", {"command": "rm -rf junk"}, id="b2")],
            match=Match(tool_result_for="b1"),
        ),
        Turn([text("done")], match=_has_result("b2", "Bash(rm *)")),
    )
    server = harness.server(scenario)
    asked: list[str] = []
    (harness.project / "junk").mkdir()

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool_input["command"])
        every_bash = sdk.PermissionUpdate(
            type="addRules",
            rules=[PermissionRuleValue(tool_name="Bash")],
            behavior="allow",
            destination="session",
        )
        return sdk.PermissionResultAllow(updated_permissions=[every_bash])

    opts = _options(harness, server, can_use_tool=can_use_tool, disallowed_tools=["Bash(rm *)"])
    got, _ = await _run(server, opts, "touch then rm")
    assert asked == ["touch a.txt"], _results(got)
    assert (harness.project / "a.txt").exists() and (harness.project / "junk").is_dir()
    assert _results(got)["b2"].is_error


async def test_project_settings_and_set_mode_apply_and_a_bad_list_is_ignored_whole(
    harness: Harness,
) -> None:
    target = harness.project / "notes.txt"
    scenario = Scenario.of(
        Turn([tool_use(ADD, {"a": 2, "b": 2}, id="t1")]),
        Turn(
            [tool_use("Write", {"file_path": str(target), "content": "hi"}, id="w1")],
            match=_has_result("t1", "4"),
        ),
        Turn([tool_use(ADD, {"a": 3, "b": 3}, id="t2")], match=Match(tool_result_for="w1")),
        Turn([tool_use(ADD, {"a": 4, "b": 4}, id="t3")], match=_has_result("t2", "6")),
        Turn(
            [tool_use("Write", {"file_path": str(target), "content": "bye"}, id="w2")],
            match=_has_result("t3", "8"),
        ),
        Turn([text("done")], match=Match(tool_result_for="w2")),
    )
    server = harness.server(scenario)
    asked: list[str] = []
    stderr: list[str] = []
    add_rule = sdk.PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue(tool_name=ADD)],
        behavior="allow",
        destination="projectSettings",
    )

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        if len(asked) == 1:  # one bad update voids the list: nothing applied, allowed once
            bad = replace(add_rule, destination="nowhere")
            return sdk.PermissionResultAllow(updated_permissions=[add_rule, bad])
        if name == ADD:
            return sdk.PermissionResultAllow(updated_permissions=[add_rule])
        edits = sdk.PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")
        return sdk.PermissionResultAllow(updated_permissions=[edits])

    opts = _options(harness, server, can_use_tool=can_use_tool, stderr=stderr.append)
    got, _ = await _run(server, opts, "add, write, add, add, write")
    # t1 asked (its list was bad), w1 asked (set acceptEdits), t2 asked (saved the rule);
    # t3 matched the rule and w2 the mode: neither asked.
    assert asked == [ADD, "Write", ADD]
    assert any("updatedPermissions ignored" in line and "nowhere" in line for line in stderr)
    project = json.loads((harness.project / ".claude" / "settings.json").read_text())
    assert project["permissions"]["allow"] == [ADD]
    assert target.read_text() == "bye"
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "done"


async def test_user_settings_directories_and_removing_or_replacing_rules(
    harness: Harness,
) -> None:
    extra = harness.root / "extra"
    extra.mkdir()
    (extra / "data.txt").write_text("outside the project\n")
    user_file = harness.root / "home" / ".claude" / "settings.json"
    scenario = Scenario.of(
        Turn([tool_use(ADD, {"a": 1, "b": 1}, id="t1")]),
        Turn(
            [tool_use("Read", {"file_path": str(extra / "data.txt")}, id="r1")],
            match=_has_result("t1", "2"),
        ),
        Turn([tool_use(ADD, {"a": 2, "b": 2}, id="t2")], match=_has_result("r1", "outside")),
        Turn([tool_use("Bash", {"command": "touch z.txt"}, id="b1")], match=_has_result("t2", "4")),
        Turn([tool_use(ADD, {"a": 3, "b": 3}, id="t3")], match=Match(tool_result_for="b1")),
        Turn([tool_use("Bash", {"command": "touch y.txt"}, id="b2")], match=_has_result("t3", "6")),
        Turn([text("done")], match=Match(tool_result_for="b2")),
    )
    server = harness.server(scenario)
    asked: list[str] = []
    saved_after_first: list[Any] = []

    def update(kind: str, rule: str, destination: str, content: str | None = None) -> Any:
        value = PermissionRuleValue(tool_name=rule, rule_content=content)
        return sdk.PermissionUpdate(
            type=kind, rules=[value], behavior="allow", destination=destination
        )

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(name)
        if len(asked) == 1:
            dirs = sdk.PermissionUpdate(
                type="addDirectories", directories=[str(extra)], destination="session"
            )
            return sdk.PermissionResultAllow(
                updated_permissions=[update("addRules", ADD, "userSettings"), dirs]
            )
        if len(asked) == 2:
            saved_after_first.append(json.loads(user_file.read_text()))
            return sdk.PermissionResultAllow(
                updated_permissions=[
                    update("removeRules", ADD, "userSettings"),
                    update("replaceRules", "Bash", "session", "touch *"),
                ]
            )
        return sdk.PermissionResultAllow()

    got, _ = await _run(server, _options(harness, server, can_use_tool=can_use_tool), "go")
    # r1 (an added directory) and t2 (a user rule) did not ask; t3 did (the rule was removed);
    # b2 matched the replaced session rule.
    assert asked == [ADD, "Bash", ADD]
    assert saved_after_first == [{"permissions": {"allow": [ADD]}}]
    assert json.loads(user_file.read_text())["permissions"]["allow"] == []
    assert (harness.project / "y.txt").exists()
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "done"


async def test_mcp_status_before_the_first_prompt_connects_the_sdk_servers(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use(ADD, {"a": 5, "b": 5}, id="t1")]),
        Turn([text("ten")], match=_has_result("t1", "10")),
    )
    server = harness.server(scenario)
    stderr: list[str] = []
    opts = _options(harness, server, allowed_tools=[ADD], stderr=stderr.append)
    # The SDK knows no instance for "ghost": it answers every message with an error.
    opts.mcp_servers = {
        **opts.mcp_servers,
        "ghost": {"type": "sdk", "name": "ghost", "instance": None},
    }
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            status = await client.get_mcp_status()
            await client.query("add 5 and 5")
            got = [m async for m in client.receive_response()]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    servers = {s["name"]: s for s in status["mcpServers"]}
    assert servers["calc"]["status"] == "connected", servers
    assert servers["calc"]["scope"] == "dynamic" and servers["calc"]["config"] == {"type": "sdk"}
    assert servers["calc"]["serverInfo"] == {"name": "calc", "version": "1.0.0"}, servers
    assert servers["calc"]["tools"] == [
        {"name": "add", "description": "Add two integers"},
        {"name": "explode", "description": "Always fails"},
    ]
    assert "tools" not in servers["ghost"] and "serverInfo" not in servers["ghost"]
    assert servers["ghost"]["status"] == "failed", servers
    assert "ghost" in servers["ghost"]["error"], servers["ghost"]["error"]
    # The turn after it has the tools, and says once on stderr why ghost is missing.
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "ten"
    assert sum("MCP server ghost failed to start" in line for line in stderr) == 1, stderr
