"""Anthropic's TypeScript Agent SDK (``@anthropic-ai/claude-agent-sdk``, the real npm package)
drives ``nerve`` as its CLI, over the scripted API.

``ts_sdk/drive.mjs`` calls the SDK's ``query()`` as a program would (``pathToClaudeCodeExecutable``
is nerve) and prints what the SDK yields and which callbacks it made, one JSON object a line.
The package is installed by ``.ci/run`` (``npm ci`` in ``ts_sdk/``, whose ``.npmrc`` leaves out
the SDK's native binaries and type-only peers); without node or the package these tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

__all__ = ["harness"]

HERE = Path(__file__).with_name("ts_sdk")
SDK_PACKAGE = HERE / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
# a command that runs until interrupted
SLOW = "python3 -c 'import time; time.sleep(888)'"


@pytest.fixture
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed (the TypeScript Agent SDK runs on Node 18+)")
    if not SDK_PACKAGE.exists():
        pytest.skip(
            "@anthropic-ai/claude-agent-sdk is not installed "
            f"(cd {HERE} && npm ci; .ci/run does it)"
        )
    return found


@dataclass
class Driven:
    events: list[dict[str, Any]]
    stderr: str
    server: ScriptedServer

    def messages(self, kind: str | None = None) -> list[dict[str, Any]]:
        got = [e["message"] for e in self.events if e["event"] == "message"]
        return [m for m in got if kind is None or m["type"] == kind]

    def calls(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]

    def errors(self) -> list[str]:
        return [e["message"] for e in self.calls("error")]

    def tool_results(self) -> dict[str, dict[str, Any]]:
        return {
            block["tool_use_id"]: block
            for m in self.messages("user")
            for block in m["message"]["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        }

    def system(self, request: int = 0) -> str:
        return json.dumps(self.server.requests[request].body["system"])


def drive(
    node: str, harness: Harness, scenario: Scenario, case: str, *, on_path: bool = False
) -> Driven:
    """Run ``drive.mjs CASE``; ``on_path``: the SDK is given the bare name ``nerve``, found on
    PATH as the README's example has it."""
    server = harness.server(scenario)
    env = {**harness.env_for(server), "NERVE_BIN": NERVE, "NERVE_CWD": str(harness.project)}
    if on_path:
        env["NERVE_BIN"] = "nerve"
        env["PATH"] = f"{Path(NERVE).parent}{os.pathsep}{env.get('PATH', '')}"
    try:
        proc = subprocess.run(
            [node, str(HERE / "drive.mjs"), case],
            cwd=HERE,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert events and events[-1] == {"event": "end"}, proc.stdout
    assert server.failures == [], server.failures
    server.assert_done()
    return Driven(events, proc.stderr, server)


def test_a_plain_query_with_a_custom_system_prompt(node: str, harness: Harness) -> None:
    scenario = Scenario.of(Turn([text("Hello from Nerve.")]))
    got = drive(node, harness, scenario, "plain", on_path=True)
    assert got.errors() == [], got.stderr
    init, answer, result = got.messages()
    assert init["type"] == "system" and init["subtype"] == "init"
    assert init["cwd"] == str(harness.project) and "Read" in init["tools"]
    assert answer["type"] == "assistant"
    assert answer["message"]["content"] == [{"type": "text", "text": "Hello from Nerve."}]
    assert answer["session_id"] == init["session_id"]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert not result["is_error"] and result["num_turns"] == 1
    assert result["result"] == "Hello from Nerve." and result["session_id"] == init["session_id"]
    # the TS SDK sends the prompt in initialize (systemPrompt: ["You are terse."]), not as a flag
    assert "You are terse." in got.system() and "You are Nerve" not in got.system()
    assert "say hello" in json.dumps(got.server.requests[0].body["messages"][0])


def test_persist_session_false_writes_no_transcript(node: str, harness: Harness) -> None:
    got = drive(node, harness, Scenario.of(Turn([text("Hi.")])), "no_persist")
    assert got.errors() == [], got.stderr
    assert got.messages("result")[-1]["result"] == "Hi."
    assert harness.transcripts() == []


def test_the_preset_prompt_with_an_append_keeps_nerves_prompt(node: str, harness: Harness) -> None:
    got = drive(node, harness, Scenario.of(Turn([text("Hi.")])), "append")
    assert got.errors() == [], got.stderr
    system = got.system()
    assert "You are Nerve" in system and "End with 'Arr.'" in system
    assert system.index("You are Nerve") < system.index("End with 'Arr.'")


def _touch_then_done() -> Scenario:
    return Scenario.of(
        Turn([tool_use("Bash", {"command": "touch asked.txt"}, id="b1")]),
        Turn([text("done")], match=Match(tool_result_for="b1")),
    )


def test_can_use_tool_allows_with_a_changed_input(node: str, harness: Harness) -> None:
    got = drive(node, harness, _touch_then_done(), "can_use_tool_allow")
    assert got.errors() == [], got.stderr
    (asked,) = got.calls("can_use_tool")
    assert asked["toolName"] == "Bash" and asked["toolUseID"] == "b1"
    assert asked["input"] == {"command": "touch asked.txt"}
    suggestion = asked["suggestions"][0]
    assert suggestion["type"] == "addRules" and suggestion["behavior"] == "allow"
    # the changed input ran, the model's did not
    assert (harness.project / "changed.txt").exists()
    assert not (harness.project / "asked.txt").exists()
    assert not got.tool_results()["b1"].get("is_error")
    result = got.messages("result")[-1]
    assert result["subtype"] == "success" and result["result"] == "done"
    assert result["permission_denials"] == []


def test_can_use_tool_denies_with_a_message(node: str, harness: Harness) -> None:
    got = drive(node, harness, _touch_then_done(), "can_use_tool_deny")
    assert got.errors() == [], got.stderr
    assert [c["toolName"] for c in got.calls("can_use_tool")] == ["Bash"]
    assert not (harness.project / "asked.txt").exists()
    denied = got.tool_results()["b1"]
    assert denied["is_error"] and "no bash today" in json.dumps(denied["content"])
    assert "no bash today" in json.dumps(got.server.requests[1].body["messages"][-1])
    result = got.messages("result")[-1]
    assert [d["tool_use_id"] for d in result["permission_denials"]] == ["b1"]


def test_a_pre_tool_use_hook_denies_the_call(node: str, harness: Harness) -> None:
    # bypassPermissions (with allowDangerouslySkipPermissions, which the TS SDK passes as
    # --allow-dangerously-skip-permissions): only the hook stands in the way
    got = drive(node, harness, _touch_then_done(), "hook_deny")
    assert got.errors() == [], got.stderr
    (hook,) = got.calls("hook")
    assert hook["toolUseID"] == "b1"
    assert hook["input"]["hook_event_name"] == "PreToolUse"
    assert hook["input"]["tool_name"] == "Bash"
    assert hook["input"]["tool_input"] == {"command": "touch asked.txt"}
    assert hook["input"]["permission_mode"] == "bypassPermissions"
    assert not (harness.project / "asked.txt").exists()
    denied = got.tool_results()["b1"]
    assert denied["is_error"] and "the hook says no" in json.dumps(denied["content"])
    assert "the hook says no" in json.dumps(got.server.requests[1].body["messages"][-1])
    assert got.messages("result")[-1]["subtype"] == "success"


def test_sdk_mcp_servers_in_process_and_external_reach_the_session(
    node: str, harness: Harness
) -> None:
    # calc: createSdkMcpServer with a zod-typed tool(), named in initialize's sdkMcpServers;
    # broken: an external server the SDK sends in initialize's mcpServers (--await-initialize)
    scenario = Scenario.of(
        Turn([tool_use("mcp__calc__add", {"a": 2, "b": 3}, id="m1")]),
        Turn([text("5")], match=Match(tool_result_for="m1")),
    )
    got = drive(node, harness, scenario, "sdk_mcp")
    assert got.errors() == [], got.stderr
    init = got.messages("system")[0]
    status = {s["name"]: s["status"] for s in init["mcp_servers"]}
    assert status == {"calc": "connected", "broken": "failed"}
    assert "mcp__calc__add" in init["tools"]
    assert [(c["a"], c["b"]) for c in got.calls("tool_call")] == [(2, 3)]
    assert json.dumps(got.tool_results()["m1"]["content"]) == '"sum: 5"'
    (add,) = [t for t in got.server.requests[0].body["tools"] if t["name"] == "mcp__calc__add"]
    assert add["description"] == "Add two numbers"  # offered (deferred, as MCP tools are)
    assert got.messages("result")[-1]["result"] == "5"


def test_agents_are_offered_and_run_with_their_prompt_and_tools(
    node: str, harness: Harness
) -> None:
    call = {"description": "review", "prompt": "look at a.py", "subagent_type": "reviewer"}
    in_sub = Match(
        predicate=lambda body: "REVIEWPROMPT" in json.dumps(body.get("system")),
        description="the reviewer's request",
    )
    scenario = Scenario.of(
        Turn([tool_use("Agent", call, id="t1")]),
        Turn([text("looks fine")], match=in_sub),
        Turn([text("Reviewed.")], match=Match(tool_result_for="t1")),
    )
    got = drive(node, harness, scenario, "agents")
    assert got.errors() == [], got.stderr
    (supported,) = got.calls("supported_agents")
    assert {"name": "reviewer", "description": "Reviews code"} in supported["agents"]
    assert "reviewer" in got.messages("system")[0]["agents"]
    main, sub, _ = (r.body for r in got.server.requests)
    assert "- reviewer: Reviews code" in json.dumps(main["system"])
    assert [t["name"] for t in sub["tools"]] == ["Read"]
    assert got.messages("result")[-1]["result"] == "Reviewed."


def test_thinking_and_effort_options_reach_the_request(node: str, harness: Harness) -> None:
    got = drive(node, harness, Scenario.of(Turn([text("Hm.")])), "thinking")
    assert got.errors() == [], got.stderr
    body = got.server.requests[0].body
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "low"}
    got = drive(node, harness, Scenario.of(Turn([text("Hm.")])), "thinking_budget")
    assert got.errors() == [], got.stderr
    assert got.server.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_set_max_thinking_tokens_turns_thinking_off_for_the_next_prompt(
    node: str, harness: Harness
) -> None:
    scenario = Scenario.of(
        Turn([text("Thought.")]), Turn([text("Not.")], match=Match(contains_text="then not"))
    )
    got = drive(node, harness, scenario, "set_thinking")
    assert got.errors() == [], got.stderr
    assert [m["result"] for m in got.messages("result")] == ["Thought.", "Not."]
    first, second = (r.body for r in got.server.requests)
    assert first["thinking"] == {"type": "adaptive"} and "thinking" not in second


def test_max_turns_stops_the_loop(node: str, harness: Harness) -> None:
    scenario = Scenario.of(Turn([tool_use("Glob", {"pattern": "*"}, id="g1")]))
    got = drive(node, harness, scenario, "max_turns")
    assert len(got.server.requests) == 1  # no second request after the one turn allowed
    result = got.messages()[-1]
    assert result["type"] == "result" and result["subtype"] == "error_max_turns"
    assert result["is_error"] and result["num_turns"] == 1
    assert [b["name"] for m in got.messages("assistant") for b in m["message"]["content"]] == [
        "Glob"
    ]
    assert list(got.tool_results()) == ["g1"]
    # an error result ends the query with an error, thrown after the result was yielded
    assert [e["event"] for e in got.events][-3:] == ["message", "error", "end"]


def test_interrupt_ends_the_running_turn_and_the_session_goes_on(
    node: str, harness: Harness
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": SLOW}, id="t_slow")]),
        Turn([text("Stopped, as asked.")], match=Match(contains_text="and now?")),
    )
    got = drive(node, harness, scenario, "interrupt")
    assert got.errors() == [], got.stderr
    assert len(got.calls("interrupted")) == 1
    stopped, answered = got.messages("result")
    assert stopped["is_error"] and stopped["subtype"] == "error_during_execution"
    assert got.tool_results()["t_slow"]["is_error"]
    assert answered["subtype"] == "success" and answered["result"] == "Stopped, as asked."
    assert stopped["session_id"] == answered["session_id"]
    history = json.dumps(got.server.requests[1].body["messages"])
    assert "t_slow" in history and "and now?" in history
