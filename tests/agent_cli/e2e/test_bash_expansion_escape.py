"""Issue 32's first reproduction through the real ``nerve -p``: a command substitution inside
a parameter-expansion operator (``${HOME#$(rm -f victim.txt)}``) ran with no prompt. Now it
asks (refused in print mode), or is denied by a ``Bash(rm:*)`` rule, in every mode but
bypassPermissions, and the file stays."""

from __future__ import annotations

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness

COMMANDS = [
    'echo "${HOME#$(rm -f victim.txt)}"',
    "echo ${HOME%%$(rm -f victim.txt)}",
    "echo ${HOME^^$(rm -f victim.txt)}",
    'cat <<< "${HOME,,$(rm -f victim.txt)}"',
]


def _result(run_body: dict, tool_id: str) -> dict:
    last = run_body["messages"][-1]
    return next(b for b in last["content"] if b.get("tool_use_id") == tool_id)


@pytest.mark.parametrize("mode", ["default", "plan", "acceptEdits", "dontAsk"])
@pytest.mark.parametrize("deny_rule", [False, True])
def test_a_substitution_inside_an_expansion_operator_never_runs(
    harness: Harness, mode: str, deny_rule: bool
) -> None:
    victim = harness.project / "victim.txt"
    victim.write_text("precious")
    ids = [f"t{i}" for i in range(len(COMMANDS))]
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": c}, id=i) for c, i in zip(COMMANDS, ids, strict=True)]),
        Turn([text("done")], match=Match(tool_result_for=ids[-1])),
    )
    args = ["-p", "tidy up", "--permission-mode", mode, "--output-format", "json"]
    if deny_rule:
        args += ["--disallowedTools", "Bash(rm:*)"]
    run = harness.run(args, scenario)
    assert run.rc == 0, run.stderr
    assert victim.read_text() == "precious"
    denied = {d["tool_use_id"] for d in run.json()["permission_denials"]}
    assert denied == set(ids)
    for i in ids:
        result = _result(run.server.requests[1].body, i)
        assert result["is_error"]
        if deny_rule:
            assert "Bash(rm:*)" in result["content"], result


def test_bypass_permissions_still_runs_it(harness: Harness) -> None:
    """bypassPermissions is the one mode that runs what would ask (the issue's exception)."""
    victim = harness.project / "victim.txt"
    victim.write_text("precious")
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": COMMANDS[0]}, id="t0")]),
        Turn([text("done")], match=Match(tool_result_for="t0")),
    )
    run = harness.run(
        ["-p", "x", "--permission-mode", "bypassPermissions", "--output-format", "json"], scenario
    )
    assert run.rc == 0, run.stderr
    assert not victim.exists()


def test_a_deny_rule_holds_in_bypass_permissions_too(harness: Harness) -> None:
    victim = harness.project / "victim.txt"
    victim.write_text("precious")
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": COMMANDS[1]}, id="t0")]),
        Turn([text("done")], match=Match(tool_result_for="t0")),
    )
    args = ["-p", "x", "--permission-mode", "bypassPermissions", "--output-format", "json"]
    run = harness.run([*args, "--disallowedTools", "Bash(rm:*)"], scenario)
    assert run.rc == 0, run.stderr
    assert victim.read_text() == "precious"
    assert "Bash(rm:*)" in _result(run.server.requests[1].body, "t0")["content"]
