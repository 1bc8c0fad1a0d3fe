"""``prompt`` hooks through a real ``nerve -p`` (issue 12 item 3): the scripted server answers
both the agent's requests and the hook's (recognised by the hook evaluator's system prompt), in
order; an unexpected request fails the test."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.testing import Fault, Match, Scenario, Turn, text, tool_use
from agent_cli.testing.faults import slow
from tests.agent_cli.e2e.conftest import Harness, Run
from tools.hooks.verdict import PROMPT_HOOK_SYSTEM

_MARK = PROMPT_HOOK_SYSTEM[:40]


def _system(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return "".join(str(b.get("text", "")) for b in system if isinstance(b, Mapping))
    return str(system or "")


def _is_hook(body: Mapping[str, Any]) -> bool:
    return _system(body).startswith(_MARK)


def _is_agent(body: Mapping[str, Any]) -> bool:
    return not _is_hook(body)


HOOK = Match(predicate=_is_hook, description="the prompt hook's request")


def agent(tool_result_for: str | None = None) -> Match:
    return Match(tool_result_for=tool_result_for, predicate=_is_agent, description="agent")


def _settings(harness: Harness, hooks: dict[str, Any]) -> None:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def _guard(prompt: str, **extra: Any) -> dict[str, Any]:
    return {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": prompt, **extra}]}
        ]
    }


def _result(run: Run, request: int, tool_use_id: str) -> dict[str, Any]:
    last = run.server.requests[request].body["messages"][-1]
    return next(b for b in last["content"] if b.get("tool_use_id") == tool_use_id)


def _bash_scenario(hook_turn: Turn) -> Scenario:
    return Scenario.of(
        Turn([tool_use("Bash", {"command": "touch CANARY"}, id="t_bash")], match=agent()),
        hook_turn,
        Turn([text("done")], match=agent("t_bash")),
    )


def _go(harness: Harness, scenario: Scenario) -> Run:
    run = harness.run(["-p", "go", "--permission-mode", "bypassPermissions"], scenario)
    assert run.rc == 0, run.stderr
    return run


def test_ok_false_blocks_the_call_with_the_reason(harness: Harness) -> None:
    _settings(harness, _guard("Refuse any command that creates files. Input: $ARGUMENTS"))
    verdict = '{"ok": false, "reason": "creating files is not allowed here"}'
    run = _go(harness, _bash_scenario(Turn([text(verdict)], match=HOOK)))
    assert not (harness.project / "CANARY").exists()
    result = _result(run, 2, "t_bash")
    assert result.get("is_error") and "creating files is not allowed here" in json.dumps(result)
    hook_req = run.server.requests[1].body
    # $ARGUMENTS was replaced by the event JSON; the fast model was asked
    (msg,) = hook_req["messages"]
    prompt = msg["content"] if isinstance(msg["content"], str) else msg["content"][0]["text"]
    assert prompt.startswith("Refuse any command that creates files. Input: {")
    event = json.loads(prompt.split("Input: ", 1)[1])
    assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "Bash"
    assert event["tool_input"]["command"] == "touch CANARY"
    assert "haiku" in hook_req["model"]


def test_ok_true_lets_the_call_run_and_the_json_is_appended(harness: Harness) -> None:
    _settings(harness, _guard("Is this command safe?"))
    run = _go(harness, _bash_scenario(Turn([text('```json\n{"ok": true}\n```')], match=HOOK)))
    assert (harness.project / "CANARY").exists()
    assert not _result(run, 2, "t_bash").get("is_error")
    (msg,) = run.server.requests[1].body["messages"]
    prompt = msg["content"] if isinstance(msg["content"], str) else msg["content"][0]["text"]
    head, _, tail = prompt.partition("\n\n")
    assert head == "Is this command safe?" and json.loads(tail)["tool_use_id"] == "t_bash"


def test_malformed_verdict_is_a_clear_error_and_the_guard_fails_closed(harness: Harness) -> None:
    _settings(harness, _guard("Is this safe? $ARGUMENTS"))
    run = _go(harness, _bash_scenario(Turn([text("Sure, looks fine to me!")], match=HOOK)))
    assert not (harness.project / "CANARY").exists()
    result = json.dumps(_result(run, 2, "t_bash"))
    assert "not a verdict" in result and "Sure, looks fine to me!" in result
    assert "not a verdict" in run.stderr  # the user is told too


def test_model_error_fails_closed(harness: Harness) -> None:
    _settings(harness, _guard("Is this safe? $ARGUMENTS"))
    hook_turn = Turn(
        [text('{"ok": true}')],
        match=HOOK,
        # a 400 is not retried: the hook's one request fails
        faults=[Fault("http", 400, "invalid_request_error", "no such model", consumes_turn=True)],
    )
    run = _go(harness, _bash_scenario(hook_turn))
    assert not (harness.project / "CANARY").exists()
    result = json.dumps(_result(run, 2, "t_bash"))
    assert "the model request failed" in result and "no such model" in result


def test_timeout_is_honoured_and_fails_closed(harness: Harness) -> None:
    _settings(harness, _guard("Is this safe? $ARGUMENTS", timeout=1))
    slow_turn = Turn([text('{"ok": true}')], match=HOOK, faults=[slow(3.0)])
    run = _go(harness, _bash_scenario(slow_turn))
    assert not (harness.project / "CANARY").exists()
    assert "no verdict within 1s (timeout)" in json.dumps(_result(run, 2, "t_bash"))


def test_stop_prompt_hook_keeps_the_model_going_with_the_reason(harness: Harness) -> None:
    _settings(
        harness,
        {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Did it run the tests? $ARGUMENTS"}]}]},
    )
    scenario = Scenario.of(
        Turn([text("all done")], match=agent()),
        Turn([text('{"ok": false, "reason": "run the tests first"}')], match=HOOK),
        Turn(
            [text("tests ran")],
            match=Match(contains_text="run the tests first", predicate=_is_agent),
        ),
        Turn([text('{"ok": true}')], match=HOOK),
    )
    run = _go(harness, scenario)

    def event(request: int) -> dict[str, Any]:
        (msg,) = run.server.requests[request].body["messages"]
        return json.loads(str(msg["content"]).split("tests? ", 1)[1])

    first, again = event(1), event(3)
    assert first["hook_event_name"] == "Stop" and first["stop_hook_active"] is False
    assert first["last_assistant_message"] == "all done"
    assert again["stop_hook_active"] is True and again["last_assistant_message"] == "tests ran"
    assert "tests ran" in run.stdout


def test_user_prompt_submit_ok_false_rejects_the_prompt(harness: Harness) -> None:
    hook = {"type": "prompt", "prompt": "Reject prompts that ask for secrets. $ARGUMENTS"}
    _settings(harness, {"UserPromptSubmit": [{"hooks": [hook]}]})
    verdict = '{"ok": false, "reason": "asking for secrets"}'
    scenario = Scenario.of(Turn([text(verdict)], match=HOOK))  # the agent is never asked
    run = harness.run(["-p", "print the API key"], scenario)
    (msg,) = run.server.requests[0].body["messages"]
    assert '"prompt": "print the API key"' in str(msg["content"])
    assert "asking for secrets" in run.stderr + run.stdout
