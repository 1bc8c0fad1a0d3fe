"""The engine on Bash requests, through the real bash analysis."""

from __future__ import annotations

import pytest

from permissions.engine import decide
from permissions.rules import make_rule
from permissions.types import (
    Decision,
    PermissionRequest,
    ReasonKind,
    RuleSource,
    RuleValue,
    ToolKind,
)
from tests.permissions.conftest import World

A, Q, D = Decision.ALLOW, Decision.ASK, Decision.DENY


def bash(command: str, **extra: object) -> PermissionRequest:
    return PermissionRequest("Bash", {"command": command, **extra}, ToolKind.BASH, command=command)


MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "bubble"]
TABLE = {
    # command:                    default acceptEdits plan bypass dontAsk auto bubble
    "ls -la src": [A, A, A, A, A, A, A],
    "make deploy": [Q, Q, D, A, D, Q, Q],
    "mkdir -p build/out": [Q, A, D, A, D, Q, Q],
    "x=rm; $x -f y": [Q, Q, D, A, D, Q, Q],  # the analysis cannot model it
    "echo hi > .git/config": [Q, Q, D, A, D, Q, Q],  # protected path: approvable
}


@pytest.mark.parametrize("command", sorted(TABLE))
@pytest.mark.parametrize("mode", MODES)
def test_bash_mode_table(world: World, command: str, mode: str) -> None:
    v = decide(bash(command), world.ctx(mode))
    assert v.decision is TABLE[command][MODES.index(mode)], (command, mode, v.reason)
    if mode == "auto" and v.decision is Q:
        assert v.kind is ReasonKind.CLASSIFIER
    if command.startswith("echo hi") and mode in ("default", "acceptEdits"):
        assert v.kind is ReasonKind.SAFETY and v.safety is not None
    if command.startswith("x=rm") and mode == "default":
        assert v.kind is ReasonKind.ANALYSIS


def test_bash_deny_and_ask_rules_beat_allow(world: World) -> None:
    ctx = world.ctx(allow=["Bash"], deny=["Bash(rm:*)"], ask=["Bash(git push *)"])
    v = decide(bash("ls && rm -rf build"), ctx)
    assert v.decision is D and str(v.rule) == "Bash(rm:*)"
    for mode in ("default", "bypassPermissions", "auto"):
        v = decide(
            bash("git push origin main"), world.ctx(mode, allow=["Bash"], ask=["Bash(git push *)"])
        )
        assert (v.decision, v.kind) == (Q, ReasonKind.RULE), mode
    assert decide(bash("npm test"), ctx).decision is A


def test_bare_bash_deny_is_tool_level(world: World) -> None:
    v = decide(bash("ls"), world.ctx(deny=["Bash"]))
    assert v.decision is D and str(v.rule) == "Bash"


def test_deny_from_user_beats_allow_from_local_for_bash(world: World) -> None:
    rules = [
        make_rule("Bash(git *)", "allow", RuleSource.LOCAL),
        make_rule("Bash(git push *)", "deny", RuleSource.USER),
    ]
    v = decide(bash("git push origin main"), world.ctx(rules=rules))
    assert v.decision is D and v.rule is not None and v.rule.source is RuleSource.USER


def test_bash_parameter_rules(world: World) -> None:
    ctx = world.ctx("bypassPermissions", ask=["Bash(run_in_background:true)"])
    v = decide(bash("npm run dev", run_in_background=True), ctx)
    assert (v.decision, v.kind) == (Q, ReasonKind.RULE)
    assert decide(bash("npm run dev", run_in_background=False), ctx).decision is A
    # the legacy prefix form is a command rule, not a parameter rule on `timeout`
    ctx = world.ctx(deny=["Bash(timeout:*)"])
    assert decide(bash("ls", timeout=1000), ctx).decision is A


def test_hard_safety_in_bash_stays_human_in_bypass(world: World) -> None:
    v = decide(bash("rm -rf /"), world.ctx("bypassPermissions", allow=["Bash"]))
    assert v.decision is Q and v.safety is not None and not v.safety.classifier_approvable


def test_bash_trace_lists_each_subcommand_once(world: World) -> None:
    v = decide(bash("git status && npm run test"), world.ctx(allow=["Bash(npm run test)"]))
    assert v.decision is A
    assert v.trace[0] == "Bash (bash) in default mode"
    sub = [line for line in v.trace if line.startswith("  ") and "npm run test" in line]
    assert len(sub) == 1 and sub[0].startswith("  ")
    assert any("git status" in line for line in v.trace)


def test_bash_suggestions_come_from_the_analysis(world: World) -> None:
    v = decide(bash("git push origin main"), world.ctx())
    assert v.decision is Q
    assert v.suggestions and all(s.tool_name == "Bash" for s in v.suggestions)
    assert RuleValue("Bash", "git push *") in v.suggestions
    ctx = world.ctx(allow=[str(s) for s in v.suggestions])
    assert decide(bash("git push origin main"), ctx).decision is A
