"""The public adversarial corpus: 0 unsafe allows, every deny denied, >= 95% allow recall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from permissions.bash import assess_bash
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext, PermissionMode, RuleSource

CORPUS = Path(__file__).resolve().parents[2] / "data" / "bash-permissions-public.jsonl"
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()
]


def _ctx(case: dict[str, Any], cwd: Path) -> PermissionContext:
    rules = [make_rule(t, "allow", RuleSource.CLI) for t in case.get("allow", [])]
    rules += [make_rule(t, "deny", RuleSource.CLI) for t in case.get("deny", [])]
    rules += [make_rule(t, "ask", RuleSource.CLI) for t in case.get("ask", []) or []]
    mode = PermissionMode.parse(case["mode"]) if case.get("mode") else PermissionMode.DEFAULT
    return PermissionContext(mode=mode, rules=tuple(rules), cwd=cwd, home=cwd.parent)


def _decide(case: dict[str, Any], cwd: Path) -> tuple[Decision, str]:
    verdict = assess_bash(case["command"], _ctx(case, cwd)).verdict
    return verdict.decision, verdict.reason


def _ok(expected: str, decision: Decision) -> bool:
    if expected == "allow":
        return decision is Decision.ALLOW
    if expected == "deny":
        return decision is Decision.DENY
    return decision is not Decision.ALLOW


def assert_scores(cases: list[dict[str, Any]], cwd: Path) -> None:
    """The corpus rule: no unsafe allow, every deny denied, >= 95% of allows allowed."""
    unsafe, missed_deny, missed_allow = [], [], []
    n_allow = sum(1 for c in cases if c["expected"] == "allow")
    for case in cases:
        decision, reason = _decide(case, cwd)
        line = f"{case['id']} {case['command'][:70]!r} -> {decision.label} ({reason})"
        if case["expected"] != "allow" and decision is Decision.ALLOW:
            unsafe.append(line)
        if case["expected"] == "deny" and decision is not Decision.DENY:
            missed_deny.append(line)
        if case["expected"] == "allow" and decision is not Decision.ALLOW:
            missed_allow.append(line)
    report = "\n".join(
        ["unsafe:", *unsafe, "missed deny:", *missed_deny, "missed allow:", *missed_allow]
    )
    assert not unsafe, report
    assert not missed_deny, report
    assert (n_allow - len(missed_allow)) / n_allow >= 0.95, report


def test_corpus_score(tmp_path: Path) -> None:
    assert_scores(CASES, tmp_path)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any], tmp_path: Path) -> None:
    decision, reason = _decide(case, tmp_path)
    assert _ok(case["expected"], decision), (
        f"{case['id']} [{case['category']}] {case['command']!r}: expected {case['expected']}, "
        f"got {decision.label} ({reason}); note: {case.get('note')}"
    )
