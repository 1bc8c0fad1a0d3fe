"""Broken settings through a real ``nerve -p`` (issue 18 items 6 and 7): nothing restrictive is
lost, a file Nerve cannot read makes tools ask, a special file never hangs start-up."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness


def _user_settings(harness: Harness, data: str | dict[str, Any]) -> Path:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def _result(body: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
    last = body["messages"][-1]
    return next(b for b in last["content"] if b.get("tool_use_id") == tool_use_id)


def _bash_then_done(command: str) -> Scenario:
    return Scenario.of(
        Turn([tool_use("Bash", {"command": command}, id="t_bash")]),
        Turn([text("done")], match=Match(tool_result_for="t_bash")),
    )


def test_deny_rule_of_a_file_with_a_trailing_comma_still_denies(harness: Harness) -> None:
    _user_settings(harness, '{"permissions": {"deny": ["Bash(touch *)"],},}')
    run = harness.run(
        ["-p", "go", "--permission-mode", "bypassPermissions"], _bash_then_done("touch CANARY")
    )
    assert run.rc == 0, run.stderr
    assert not (harness.project / "CANARY").exists()
    denial = _result(run.server.requests[1].body, "t_bash")
    assert denial.get("is_error") and "Bash(touch *)" in json.dumps(denial)
    assert "this file is ignored except its deny and ask rules" in run.stderr


def test_unrecoverable_file_makes_every_tool_ask(harness: Harness) -> None:
    (harness.project / "notes.txt").write_text("hello\n")
    _user_settings(harness, '{"permissions": {"deny": ["Read(./notes.txt)", "Bash(cu')
    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(harness.project / "notes.txt")}, id="t_read")]),
        Turn([text("done")], match=Match(tool_result_for="t_read")),
    )
    # bypass mode would run anything; ask rules still ask, and print mode cannot answer
    run = harness.run(["-p", "read", "--permission-mode", "bypassPermissions"], scenario)
    assert run.rc == 0, run.stderr
    denial = _result(run.server.requests[1].body, "t_read")
    assert denial.get("is_error") and "hello" not in json.dumps(denial)
    assert "every tool call asks until the file is fixed" in run.stderr


def test_a_hook_typo_is_reported_and_the_guard_beside_it_still_blocks(harness: Harness) -> None:
    guard = {"type": "command", "command": "echo 'blocked by the guard' >&2; exit 2"}
    typo = {"type": "comand", "command": "true"}
    _user_settings(
        harness, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [typo, guard]}]}}
    )
    run = harness.run(
        ["-p", "go", "--allowedTools", "Bash(touch *)"], _bash_then_done("touch CANARY")
    )
    assert run.rc == 0, run.stderr
    assert not (harness.project / "CANARY").exists()
    assert "blocked by the guard" in json.dumps(_result(run.server.requests[1].body, "t_bash"))
    assert "hooks.PreToolUse[0].hooks[0].type: expected 'command'" in run.stderr
    assert "this hook is skipped" in run.stderr


def test_numeric_env_value_keeps_the_files_hooks_and_rules(harness: Harness) -> None:
    # compat-gaps F2: Zhipu's numeric flag used to void the file (no hook, Bash rejected).
    marker = harness.root / "hook-ran.txt"
    _user_settings(
        harness,
        {
            "env": {"FOO": "bar", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": 1},
            "permissions": {"allow": ["Bash(touch:*)"]},
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": f'echo ran >> "{marker}"'}],
                    }
                ]
            },
        },
    )
    run = harness.run(["-p", "go"], _bash_then_done("touch CANARY"))
    assert run.rc == 0, run.stderr
    assert (harness.project / "CANARY").exists()
    assert marker.read_text() == "ran\n"
    assert "ignored" not in run.stderr


@pytest.mark.timeout(60)
def test_fifo_as_settings_file_is_refused_and_the_run_goes_on(harness: Harness) -> None:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("still here")])), timeout=30)
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "still here"
    assert "is a FIFO (named pipe), not a regular file; not opened" in run.stderr
