"""``agent`` hooks through a real ``nerve -p`` (issue 12 item 3): a read-only sub-agent (Read,
Glob, Grep) investigates with real tools, and its final answer is the ``{ok, reason}`` verdict.
The scripted server serves the agent's and the hook agent's requests in order (the hook agent's
recognised by its system prompt); an unexpected request fails the test."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.agents.hook_agent import AGENT_HOOK_SYSTEM
from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.testing.faults import slow
from tests.agent_cli.e2e.conftest import Harness, Run

_MARK = AGENT_HOOK_SYSTEM[:40]


def _system(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return "".join(str(b.get("text", "")) for b in system if isinstance(b, Mapping))
    return str(system or "")


def _is_hook_agent(body: Mapping[str, Any]) -> bool:
    return _system(body).startswith(_MARK)


def _is_main(body: Mapping[str, Any]) -> bool:
    return not _is_hook_agent(body)


def hook(tool_result_for: str | None = None) -> Match:
    return Match(tool_result_for=tool_result_for, predicate=_is_hook_agent, description="hook")


def main(tool_result_for: str | None = None) -> Match:
    return Match(tool_result_for=tool_result_for, predicate=_is_main, description="main agent")


def _settings(harness: Harness, prompt: str, **extra: Any) -> None:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = {"type": "agent", "prompt": prompt, **extra}
    path.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
    )


def _result(run: Run, request: int, tool_use_id: str) -> dict[str, Any]:
    last = run.server.requests[request].body["messages"][-1]
    return next(b for b in last["content"] if b.get("tool_use_id") == tool_use_id)


def _go(harness: Harness, *hook_turns: Turn) -> Run:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "touch CANARY"}, id="t_bash")], match=main()),
        *hook_turns,
        Turn([text("done")], match=main("t_bash")),
    )
    run = harness.run(["-p", "go", "--permission-mode", "bypassPermissions"], scenario)
    assert run.rc == 0, run.stderr
    return run


def test_the_agent_reads_the_project_and_its_ok_false_blocks_the_call(harness: Harness) -> None:
    (harness.project / "POLICY.md").write_text("Never create files named CANARY.\n")
    _settings(harness, "Check the command against POLICY.md. $ARGUMENTS")
    policy = str(harness.project / "POLICY.md")
    run = _go(
        harness,
        Turn([tool_use("Read", {"file_path": policy}, id="h_read")], match=hook()),
        Turn(
            [text('{"ok": false, "reason": "POLICY.md forbids CANARY files"}')],
            match=hook("h_read"),
        ),
    )
    assert not (harness.project / "CANARY").exists()
    result = _result(run, 3, "t_bash")
    assert result.get("is_error") and "POLICY.md forbids CANARY files" in json.dumps(result)
    first = run.server.requests[1].body
    # Read-only tools only, the fast model, the task = the prompt with the event JSON
    assert sorted(t["name"] for t in first["tools"]) == ["Glob", "Grep", "Read"]
    assert "haiku" in first["model"]
    task = json.dumps(first["messages"][0])
    assert "Check the command against POLICY.md." in task and "touch CANARY" in task
    # the Read really ran and its content reached the hook agent
    read = _result(run, 2, "h_read")
    assert not read.get("is_error") and "Never create files named CANARY." in json.dumps(read)


def test_ok_true_lets_the_call_run(harness: Harness) -> None:
    _settings(harness, "Is this command fine? $ARGUMENTS")
    run = _go(harness, Turn([text('{"ok": true}')], match=hook()))
    assert (harness.project / "CANARY").exists()
    assert not _result(run, 2, "t_bash").get("is_error")


def test_the_hook_agent_cannot_write_and_a_non_verdict_fails_closed(harness: Harness) -> None:
    _settings(harness, "Check it. $ARGUMENTS")
    target = str(harness.project / "WRITTEN")
    run = _go(
        harness,
        Turn(
            [tool_use("Write", {"file_path": target, "content": "x"}, id="h_write")],
            match=hook(),
        ),
        Turn([text("I could not decide.")], match=hook("h_write")),
    )
    assert not (harness.project / "WRITTEN").exists()
    assert _result(run, 2, "h_write").get("is_error")  # Write is not among its tools
    assert not (harness.project / "CANARY").exists()
    result = json.dumps(_result(run, 3, "t_bash"))
    assert "not a verdict" in result and "I could not decide." in result


def test_the_timeout_stops_the_agent_and_fails_closed(harness: Harness) -> None:
    _settings(harness, "Check it. $ARGUMENTS", timeout=1)
    run = _go(harness, Turn([text('{"ok": true}')], match=hook(), faults=[slow(3.0)]))
    assert not (harness.project / "CANARY").exists()
    assert "no verdict within 1s (timeout)" in json.dumps(_result(run, 2, "t_bash"))
