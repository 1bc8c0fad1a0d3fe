"""What the TypeScript Agent SDK puts in ``initialize`` (frontends/sdk/initialize.py), over raw pipes: the
system prompt and MCP servers shape the session when initialize is the first line, and a late
initialize says on stderr that they were not applied."""

from __future__ import annotations

import json
from typing import Any

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness, harness
from tests.agent_cli.frontends.sdk.test_protocol import SDK_ARGS, Pipe, control, user

__all__ = ["harness"]


def _answer(stdout: str, request_id: str) -> dict[str, Any]:
    for line in stdout.splitlines():
        frame = json.loads(line)
        if frame["type"] == "control_response" and frame["response"]["request_id"] == request_id:
            return frame["response"]
    raise AssertionError(f"no answer to {request_id}: {stdout}")


def test_a_first_initialize_sets_the_system_prompt_and_its_append(harness: Harness) -> None:
    prompt = ["Static part.", "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__", "Dynamic part."]
    lines = [
        control("i1", "initialize", systemPrompt=prompt, appendSystemPrompt="Appended."),
        user([{"type": "text", "text": "hi"}]),
    ]
    run = harness.run(SDK_ARGS, Scenario.of(Turn([text("ok")])), input="\n".join(lines) + "\n")
    assert run.rc == 0, run.stderr
    assert _answer(run.stdout, "i1")["subtype"] == "success"
    system = json.dumps(run.server.requests[0].body["system"])
    assert "Static part.\\n\\nDynamic part." in system and "DYNAMIC_BOUNDARY" not in system
    assert "You are Nerve" not in system and "Appended." in system


def test_an_empty_system_prompt_keeps_nerves(harness: Harness) -> None:
    # the TS SDK sends systemPrompt: [""] when the caller set none
    lines = [control("i1", "initialize", systemPrompt=[""]), user("hi")]
    run = harness.run(SDK_ARGS, Scenario.of(Turn([text("ok")])), input="\n".join(lines) + "\n")
    assert run.rc == 0, run.stderr
    assert "You are Nerve" in json.dumps(run.server.requests[0].body["system"])


def test_initialize_mcp_servers_join_the_session_and_are_reported_applied(
    harness: Harness,
) -> None:
    # an MCP server that cannot start still shows that the config reached the session
    servers = {"broken": {"command": "/nonexistent/mcp-server"}}
    server = harness.server(Scenario.of())
    pipe = Pipe(harness, server, SDK_ARGS)
    try:
        pipe.send(control("i1", "initialize", mcpServers=servers), control("s1", "mcp_status"))
        seen = pipe.until(lambda f: f.get("response", {}).get("request_id") == "s1")
        rc, _, err = pipe.close()
    finally:
        server.stop()
    assert rc == 0, err
    stdout = "\n".join(json.dumps(f) for f in seen)
    assert _answer(stdout, "i1")["response"]["mcp_servers_applied"] is True
    status = _answer(stdout, "s1")["response"]["mcpServers"]
    assert [s["name"] for s in status] == ["broken"]


def test_a_late_initialize_cannot_change_the_built_session_and_says_so(
    harness: Harness,
) -> None:
    lines = [
        user("hi"),
        control("i1", "initialize", systemPrompt=["You are terse."], mcpServers={}),
    ]
    run = harness.run(SDK_ARGS, Scenario.of(Turn([text("ok")])), input="\n".join(lines) + "\n")
    assert run.rc == 0, run.stderr
    answer = _answer(run.stdout, "i1")
    assert answer["subtype"] == "success"
    assert answer["response"]["mcp_servers_applied"] is False
    assert "systemPrompt, mcpServers not applied" in run.stderr
    assert "You are Nerve" in json.dumps(run.server.requests[0].body["system"])


def test_allow_dangerously_skip_permissions_offers_bypass_without_starting_in_it(
    harness: Harness,
) -> None:
    to_bypass = control("m1", "set_permission_mode", mode="bypassPermissions")
    plain = harness.run(SDK_ARGS, Scenario.of(), input=to_bypass + "\n")
    assert _answer(plain.stdout, "m1")["subtype"] == "error"  # not enabled at launch
    server = harness.server(Scenario.of(Turn([text("one")]), Turn([text("two")])))
    pipe = Pipe(harness, server, [*SDK_ARGS, "--allow-dangerously-skip-permissions"])
    try:
        pipe.send(user("hi"))
        first = pipe.until(lambda f: f["type"] == "result")
        pipe.send(to_bypass)
        answer = pipe.until(lambda f: f["type"] == "control_response")[-1]
        pipe.send(user("again"))
        second = pipe.until(lambda f: f["type"] == "result")
        rc, _, err = pipe.close()
    finally:
        server.stop()
    assert rc == 0, err
    assert answer["response"]["subtype"] == "success"
    modes = [f["permissionMode"] for f in first + second if f.get("subtype") == "init"]
    assert modes == ["default", "bypassPermissions"]


def test_set_max_thinking_tokens_refuses_what_is_not_a_budget(harness: Harness) -> None:
    lines = [
        control("t1", "set_max_thinking_tokens", max_thinking_tokens="lots"),
        control("t2", "set_max_thinking_tokens", max_thinking_tokens=-1),
        control("t3", "set_max_thinking_tokens", max_thinking_tokens=None),
    ]
    server = harness.server(Scenario.of())
    pipe = Pipe(harness, server, SDK_ARGS)
    try:
        pipe.send(*lines)
        seen: list[dict[str, Any]] = []
        for _ in lines:
            seen += pipe.until(lambda f: f["type"] == "control_response")
        rc, _, err = pipe.close()
    finally:
        server.stop()
    assert rc == 0, err
    answers = {f["response"]["request_id"]: f["response"]["subtype"] for f in seen}
    assert answers == {"t1": "error", "t2": "error", "t3": "success"}
