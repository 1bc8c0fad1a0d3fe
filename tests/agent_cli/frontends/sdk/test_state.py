"""``system``/``session_state_changed`` frames: ``running`` when a turn starts,
``requires_action`` while ``can_use_tool`` waits, ``idle`` after the last queued prompt's result,
only when the SDK asks for them; the real SDK's ``query()`` with hooks waits for ``idle``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness
from tests.agent_cli.frontends.sdk.test_protocol import SDK_ARGS, Pipe, control, response_to, user

__all__ = ["harness"]

STATE = "session_state_changed"


def states(frames: list[dict[str, Any]]) -> list[str]:
    return [f["state"] for f in frames if f.get("subtype") == STATE]


def test_states_go_running_requires_action_running_idle_once_the_queue_is_empty(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch made.txt"}, id="b1")]),
        Turn([text("one")], match=Match(tool_result_for="b1")),
        Turn([text("two")], match=Match(contains_text="second")),
    )
    server = harness.server(scenario)
    harness.env["CLAUDE_CODE_SDK_READS_SESSION_STATE"] = "1"
    try:
        pipe = Pipe(harness, server, [*SDK_ARGS, "--permission-prompt-tool", "stdio"])
        pipe.send(user("first"), user("second"))  # the second waits behind the first
        asked = pipe.until(lambda f: f["type"] == "control_request")
        ask = asked[-1]
        assert ask["request"]["subtype"] == "can_use_tool"
        pipe.send(
            json.dumps(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": ask["request_id"],
                        "response": {"behavior": "allow", "updatedInput": ask["request"]["input"]},
                    },
                }
            )
        )
        rest = pipe.until(lambda f: f.get("subtype") == STATE and f["state"] == "idle")
        rc, tail, err = pipe.close()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    frames = asked + rest
    assert states(frames) == ["running", "requires_action", "running", "idle"]
    results = [i for i, f in enumerate(frames) if f["type"] == "result"]
    assert [frames[i]["result"] for i in results] == ["one", "two"]
    assert frames[-1]["state"] == "idle" and results[-1] == len(frames) - 2  # idle after both
    assert frames[0]["state"] == "running"  # before the turn's init frame
    for f in frames:
        if f.get("subtype") == STATE:
            assert (
                f["sdk_host_only"] is True and f["session_id"] == frames[results[0]]["session_id"]
            )
    assert (harness.project / "made.txt").exists()
    assert rc == 0 and tail == "", err


def test_no_state_frames_unless_asked(harness: Harness) -> None:
    server = harness.server(Scenario.of(Turn([text("quiet")])))
    try:
        pipe = Pipe(harness, server, SDK_ARGS)
        pipe.send(control("req_1", "initialize", hooks=None), user("hi"))
        frames = pipe.until(lambda f: f["type"] == "result")
        rc, tail, err = pipe.close()
    finally:
        server.stop()
    assert states(frames) == [] and tail == "" and rc == 0, err
    assert response_to("req_1")(frames[0])


async def test_the_sdk_waits_for_idle_and_shows_the_states_when_asked(harness: Harness) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    scenario = Scenario.of(
        Turn([tool_use("Glob", {"pattern": "*"}, id="g1")]),
        Turn([text("Listed.")], match=Match(tool_result_for="g1")),
    )
    server = harness.server(scenario)
    called: list[str] = []

    async def note(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        called.append(hook_input["tool_name"])
        return {}

    env = {**harness.env_for(server), "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"}
    opts = sdk.ClaudeAgentOptions(
        cli_path=NERVE,
        cwd=str(harness.project),
        env=env,
        hooks={"PostToolUse": [sdk.HookMatcher(hooks=[note])]},
    )
    try:
        got = [m async for m in sdk.query(prompt="list", options=opts)]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert called == ["Glob"]
    shown = [m for m in got if isinstance(m, sdk.SystemMessage) and m.subtype == STATE]
    assert [m.data["state"] for m in shown] == ["running", "idle"]
    assert "sdk_host_only" not in shown[0].data
    kinds = [type(m).__name__ for m in got]
    assert kinds.index("ResultMessage") < got.index(shown[-1])  # idle comes after the result
