"""The Agent SDK's hooks (``ClaudeAgentOptions.hooks``, the real package) over the scripted API:
each match sends ``hook_callback`` and the reply is applied as a command hook's output; a
callback that fails fails a guard closed; ``query()`` with hooks completes (it waits for the
``idle`` session state nerve sends)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

__all__ = ["harness"]


def options(harness: Harness, server: ScriptedServer, **kw: Any) -> Any:
    return sdk.ClaudeAgentOptions(
        cli_path=NERVE, cwd=str(harness.project), env=harness.env_for(server), **kw
    )


async def run_query(prompt: str, opts: Any, server: ScriptedServer) -> list[Any]:
    try:
        got = [m async for m in sdk.query(prompt=prompt, options=opts)]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    return got


def tool_results(got: list[Any]) -> dict[str, Any]:
    return {
        b.tool_use_id: b
        for m in got
        if isinstance(m, sdk.UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, sdk.ToolResultBlock)
    }


def carrying(needle: str) -> Match:
    """The request's messages carry ``needle`` (a hook's context reached the model)."""
    return Match(
        predicate=lambda body: needle in json.dumps(body["messages"]),
        description=f"the messages carry {needle!r}",
    )


def sent(server: ScriptedServer, needle: str) -> bool:
    """Some request to the model carried ``needle``."""
    return any(needle in json.dumps(r.body["messages"]) for r in server.requests)


async def test_a_pre_tool_use_deny_stops_the_call_and_the_model_gets_the_reason(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch ran.txt"}, id="b1")]),
        Turn([text("Understood.")], match=Match(tool_result_for="b1")),
    )
    server = harness.server(scenario)
    seen: list[tuple[dict[str, Any], str | None]] = []

    async def guard(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        seen.append((hook_input, tool_use_id))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no shell in this repo",
            }
        }

    hooks = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[guard])]}
    opts = options(harness, server, hooks=hooks, permission_mode="bypassPermissions")
    got = await run_query("make a file", opts, server)
    assert not (harness.project / "ran.txt").exists()
    ((hook_input, tool_use_id),) = seen
    assert tool_use_id == "b1"
    assert hook_input["hook_event_name"] == "PreToolUse" and hook_input["tool_name"] == "Bash"
    assert hook_input["tool_input"] == {"command": "touch ran.txt"}
    assert hook_input["cwd"] == str(harness.project)
    result = tool_results(got)["b1"]
    assert result.is_error and "no shell in this repo" in json.dumps(result.content)
    assert sent(server, "no shell in this repo")
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "Understood."


async def test_an_allow_with_updated_input_runs_the_changed_command_and_deny_rules_still_win(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch asked.txt"}, id="b1")]),
        Turn(
            [tool_use("Bash", {"command": "rm -rf junk"}, id="b2")],
            match=Match(tool_result_for="b1"),
        ),
        Turn([text("Done.")], match=Match(tool_result_for="b2")),
    )
    server = harness.server(scenario)
    (harness.project / "junk").mkdir()
    seen: list[str] = []

    async def rewrite(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        command = hook_input["tool_input"]["command"]
        seen.append(command)
        specific: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        if command.startswith("touch"):
            specific["updatedInput"] = {"command": "touch changed.txt"}
        return {"hookSpecificOutput": specific}

    hooks = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[rewrite])]}
    # default mode: without the hook's allow, `touch` would ask (and headless, be denied)
    opts = options(harness, server, hooks=hooks, disallowed_tools=["Bash(rm *)"])
    got = await run_query("touch, then remove", opts, server)
    assert seen == ["touch asked.txt", "rm -rf junk"]
    assert (harness.project / "changed.txt").exists()
    assert not (harness.project / "asked.txt").exists()
    assert (harness.project / "junk").is_dir()  # the deny rule won over the hook's allow
    results = tool_results(got)
    assert not results["b1"].is_error
    assert results["b2"].is_error and "Bash(rm *)" in json.dumps(results["b2"].content)
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "Done."


async def test_post_tool_use_sees_the_result_and_its_context_reaches_the_model(
    harness: Harness,
) -> None:
    notes = harness.project / "notes.txt"
    notes.write_text("alpha beta\n")
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(notes)}, id="r1")]),
        Turn(
            [text("Read it.")],
            match=carrying("reviewed by the SDK"),
        ),
    )
    server = harness.server(scenario)
    seen: list[dict[str, Any]] = []

    async def review(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        seen.append(hook_input)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "reviewed by the SDK",
            }
        }

    hooks = {"PostToolUse": [sdk.HookMatcher(matcher="Read", hooks=[review])]}
    got = await run_query("read notes", options(harness, server, hooks=hooks), server)
    (hook_input,) = seen
    assert hook_input["hook_event_name"] == "PostToolUse" and hook_input["tool_use_id"] == "r1"
    assert "alpha beta" in json.dumps(hook_input["tool_response"])
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "Read it."


async def test_user_prompt_submit_adds_context_or_blocks_the_prompt(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn(
            [text("Noted.")],
            match=carrying("ticket ABC-1"),
        ),
    )
    server = harness.server(scenario)
    prompts: list[str] = []

    async def on_prompt(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        prompts.append(hook_input["prompt"])
        if "secret" in hook_input["prompt"]:
            return {"decision": "block", "reason": "prompts may not mention secrets"}
        return {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "ticket ABC-1",
            }
        }

    hooks = {"UserPromptSubmit": [sdk.HookMatcher(hooks=[on_prompt])]}
    try:
        async with sdk.ClaudeSDKClient(options=options(harness, server, hooks=hooks)) as client:
            await client.query("what is this about")
            first = [m async for m in client.receive_response()]
            await client.query("tell me the secret")
            second = [m async for m in client.receive_response()]
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()  # the blocked prompt never reached the model
    assert prompts == ["what is this about", "tell me the secret"]
    assert isinstance(first[-1], sdk.ResultMessage) and first[-1].result == "Noted."
    blocked = second[-1]
    assert isinstance(blocked, sdk.ResultMessage) and blocked.is_error
    assert "prompts may not mention secrets" in json.dumps(blocked.errors or [])


async def test_a_callback_that_raises_denies_the_call_unless_its_matcher_says_continue(
    harness: Harness,
) -> None:
    notes = harness.project / "notes.txt"
    notes.write_text("alpha\n")
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch ran.txt"}, id="b1")]),
        Turn(
            [tool_use("Read", {"file_path": str(notes)}, id="r1")],
            match=Match(tool_result_for="b1"),
        ),
        Turn([text("Done.")], match=Match(tool_result_for="r1")),
    )
    server = harness.server(scenario)

    async def broken(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        raise RuntimeError(f"guard crashed on {hook_input['tool_name']}")

    hooks = {  # "block" also makes the SDK check that initialize says nerve honours it
        "PreToolUse": [
            sdk.HookMatcher(matcher="Bash", hooks=[broken], on_failure="block"),
            sdk.HookMatcher(matcher="Read", hooks=[broken], on_failure="continue"),
        ]
    }
    opts = options(harness, server, hooks=hooks, permission_mode="bypassPermissions")
    got = await run_query("touch and read", opts, server)
    assert not (harness.project / "ran.txt").exists()
    results = tool_results(got)
    assert results["b1"].is_error
    assert "guard crashed on Bash" in json.dumps(results["b1"].content)
    assert not results["r1"].is_error and "alpha" in json.dumps(results["r1"].content)


async def test_a_stop_hook_sends_the_model_back_to_work_once(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([text("First answer.")]),
        Turn(
            [text("Better answer.")],
            match=Match(contains_text="cite the file"),
        ),
    )
    server = harness.server(scenario)
    seen: list[dict[str, Any]] = []

    async def review(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        seen.append(hook_input)
        if hook_input["stop_hook_active"]:
            return {}
        return {"decision": "block", "reason": "cite the file"}

    hooks = {"Stop": [sdk.HookMatcher(hooks=[review])]}
    got = await run_query("answer", options(harness, server, hooks=hooks), server)
    assert [h["stop_hook_active"] for h in seen] == [False, True]
    assert seen[0]["last_assistant_message"] == "First answer."
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "Better answer."


def test_over_raw_pipes_a_bad_registration_is_an_error_and_an_error_answer_denies(
    harness: Harness,
) -> None:
    from tests.agent_cli.frontends.sdk.test_protocol import SDK_ARGS, Pipe, control, user

    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch ran.txt"}, id="b1")]),
        Turn([text("Denied, then.")], match=Match(tool_result_for="b1")),
    )
    server = harness.server(scenario)
    good = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["cb_1"], "timeout": 30}]}
    try:
        pipe = Pipe(harness, server, [*SDK_ARGS, "--permission-mode", "bypassPermissions"])
        pipe.send(
            control("i1", "initialize", hooks={"PreToolUse": [{"matcher": "Bash"}]}),
            control(
                "i2",
                "initialize",
                hooks={"PreToolUse": [{"matcher": "(", "hookCallbackIds": ["x"]}]},
            ),
            control("i3", "initialize", hooks=good),
        )
        answers = pipe.until(lambda f: f.get("response", {}).get("request_id") == "i3")
        pipe.send(user("go"))
        frames = pipe.until(lambda f: f["type"] == "control_request")
        ask = frames[-1]
        pipe.send(
            json.dumps(
                {
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": "nobody"},
                }
            ),
            json.dumps(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "error",
                        "request_id": ask["request_id"],
                        "error": "kaput",
                    },
                }
            ),
        )
        frames += pipe.until(lambda f: f["type"] == "result")
        rc, _, err = pipe.close()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    by_id = {a["response"]["request_id"]: a["response"] for a in answers}
    assert by_id["i1"]["subtype"] == "error" and "hookCallbackIds" in by_id["i1"]["error"]
    assert by_id["i2"]["subtype"] == "error" and "regex" in by_id["i2"]["error"]
    assert by_id["i3"]["subtype"] == "success"
    assert by_id["i3"]["response"]["hooks_applied"] is True
    assert ask["request"] == {
        "subtype": "hook_callback",
        "callback_id": "cb_1",
        "input": ask["request"]["input"],
        "tool_use_id": "b1",
    }
    assert ask["request"]["input"]["tool_input"] == {"command": "touch ran.txt"}
    assert not (harness.project / "ran.txt").exists()
    denied = next(f for f in frames if f["type"] == "user")["message"]["content"][0]
    assert denied["is_error"] and "kaput" in json.dumps(denied["content"])
    assert "unknown request id 'nobody'" in err and rc == 0


async def test_permission_request_and_session_start_hooks_answer_through_the_sdk(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn(
            [tool_use("Bash", {"command": "touch made.txt"}, id="b1")],
            match=carrying("release week"),
        ),
        Turn([text("Made.")], match=Match(tool_result_for="b1")),
    )
    server = harness.server(scenario)
    seen: list[dict[str, Any]] = []

    async def answer(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        seen.append(hook_input)
        event = hook_input["hook_event_name"]
        if event == "SessionStart":
            specific = {"hookEventName": event, "additionalContext": "release week"}
        else:
            specific = {"hookEventName": event, "decision": {"behavior": "allow"}}
        return {"hookSpecificOutput": specific}

    hooks = {
        "SessionStart": [sdk.HookMatcher(hooks=[answer])],
        "PermissionRequest": [sdk.HookMatcher(matcher="Bash", hooks=[answer])],
    }
    # default mode and no can_use_tool: without the hook, the ask would be denied
    got = await run_query("make it", options(harness, server, hooks=hooks), server)
    assert [h["hook_event_name"] for h in seen] == ["SessionStart", "PermissionRequest"]
    assert seen[0]["source"] == "startup"
    assert seen[1]["tool_input"] == {"command": "touch made.txt"}
    assert (harness.project / "made.txt").exists()
    assert not tool_results(got)["b1"].is_error
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "Made."


def test_over_raw_pipes_a_hook_not_answered_in_time_denies_and_its_late_answer_is_named(
    harness: Harness,
) -> None:
    from tests.agent_cli.frontends.sdk.test_protocol import SDK_ARGS, Pipe, control, user

    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch ran.txt"}, id="b1")]),
        Turn([text("Timed out, then.")], match=Match(tool_result_for="b1")),
    )
    server = harness.server(scenario)
    slow = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["cb_1"], "timeout": 0.2}]}
    try:
        pipe = Pipe(harness, server, [*SDK_ARGS, "--permission-mode", "bypassPermissions"])
        pipe.send(control("i1", "initialize", hooks=slow), user("go"))
        frames = pipe.until(lambda f: f["type"] == "control_request")
        ask = frames[-1]
        frames += pipe.until(lambda f: f["type"] == "result")  # nobody answered in time
        late = {"subtype": "success", "request_id": ask["request_id"], "response": {}}
        pipe.send(json.dumps({"type": "control_response", "response": late}))
        rc, _, err = pipe.close()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert not (harness.project / "ran.txt").exists()
    denied = next(f for f in frames if f["type"] == "user")["message"]["content"][0]
    assert denied["is_error"] and "timeout" in json.dumps(denied["content"])
    assert f"a late answer to the hook_callback request {ask['request_id']!r}" in err, err
    assert rc == 0


async def test_a_sub_agents_tool_calls_carry_its_agent_id_and_type(harness: Harness) -> None:
    agent = {"description": "look", "prompt": "SUBPROMPT", "subagent_type": "general-purpose"}
    scenario = Scenario.of(
        Turn([tool_use("Glob", {"pattern": "*"}, id="g0")]),
        Turn([tool_use("Agent", agent, id="t_agent")], match=Match(tool_result_for="g0")),
        Turn([tool_use("Glob", {"pattern": "*.txt"}, id="g1")], match=carrying("SUBPROMPT")),
        Turn([text("sub done")], match=Match(tool_result_for="g1")),
        Turn([text("all done")], match=Match(tool_result_for="t_agent")),
    )
    server = harness.server(scenario)
    seen: list[dict[str, Any]] = []

    async def note(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        seen.append(hook_input)
        return {}

    hooks = {
        "PreToolUse": [sdk.HookMatcher(matcher="Glob", hooks=[note])],
        "SubagentStop": [sdk.HookMatcher(hooks=[note])],
    }
    opts = options(harness, server, hooks=hooks, allowed_tools=["Agent"])
    got = await run_query("look around", opts, server)
    main, child, stop = seen
    assert main["tool_use_id"] == "g0" and "agent_id" not in main and "agent_type" not in main
    assert child["tool_use_id"] == "g1" and child["agent_type"] == "general-purpose"
    assert stop["hook_event_name"] == "SubagentStop" and child["agent_id"] == stop["agent_id"]
    assert isinstance(got[-1], sdk.ResultMessage) and got[-1].result == "all done"


async def test_an_interrupt_while_a_hook_waits_ends_the_turn_and_the_session_goes_on(
    harness: Harness,
) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch ran.txt"}, id="b1")]),
        Turn([text("Still here.")], match=Match(contains_text="and now?")),
    )
    server = harness.server(scenario)
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(hook_input: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        entered.set()
        await release.wait()
        return {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        }

    hooks = {"PreToolUse": [sdk.HookMatcher(matcher="Bash", hooks=[slow])]}
    opts = options(harness, server, hooks=hooks, permission_mode="bypassPermissions")
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            await client.query("make a file")
            await entered.wait()  # nerve is waiting for the hook's answer
            await client.interrupt()
            first = [m async for m in client.receive_response()]
            release.set()  # the hook answers now, too late
            await client.query("and now?")
            second = [m async for m in client.receive_response()]
    finally:
        release.set()
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    stopped = first[-1]
    assert isinstance(stopped, sdk.ResultMessage) and stopped.terminal_reason == "aborted_tools"
    assert not (harness.project / "ran.txt").exists()
    assert isinstance(second[-1], sdk.ResultMessage) and second[-1].result == "Still here."
