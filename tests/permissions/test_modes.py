"""The Shift+Tab cycle and what each mode does with a pending call."""

from __future__ import annotations

import pytest

from permissions.modes import Pending, apply_mode, next_mode
from permissions.types import Decision, PermissionMode, ReasonKind, SafetyCheck, Verdict

M = PermissionMode


def test_cycle_without_bypass() -> None:
    seq = [M.DEFAULT]
    for _ in range(3):
        seq.append(next_mode(seq[-1]))
    assert seq == [M.DEFAULT, M.ACCEPT_EDITS, M.PLAN, M.DEFAULT]


def test_cycle_with_bypass() -> None:
    assert next_mode(M.PLAN, bypass_available=True) is M.BYPASS
    assert next_mode(M.BYPASS, bypass_available=True) is M.DEFAULT


@pytest.mark.parametrize("mode", [M.AUTO, M.DONT_ASK, M.BUBBLE])
def test_modes_outside_the_cycle_return_to_default(mode: PermissionMode) -> None:
    assert next_mode(mode, bypass_available=True) is M.DEFAULT


ASK = Verdict(Decision.ASK, "x needs permission", ReasonKind.MODE)
HARD = Verdict(Decision.ASK, "trick", ReasonKind.SAFETY, safety=SafetyCheck("t", False))


@pytest.mark.parametrize(
    ("pending", "mode", "decision"),
    [
        (Pending(ASK), M.DEFAULT, Decision.ASK),
        (Pending(ASK, accept_edits_ok=True), M.ACCEPT_EDITS, Decision.ALLOW),
        (Pending(ASK), M.ACCEPT_EDITS, Decision.ASK),
        (Pending(ASK), M.PLAN, Decision.DENY),
        (Pending(ASK, read_only=True), M.PLAN, Decision.ASK),
        (Pending(ASK), M.BYPASS, Decision.ALLOW),
        (Pending(ASK), M.DONT_ASK, Decision.DENY),
        (Pending(ASK), M.AUTO, Decision.ASK),
        (Pending(ASK), M.BUBBLE, Decision.ASK),
        (Pending(HARD, human_only=True), M.BYPASS, Decision.ASK),
        (Pending(HARD, human_only=True), M.AUTO, Decision.ASK),
        (Pending(HARD, human_only=True), M.DONT_ASK, Decision.DENY),
        (Pending(HARD, human_only=True, accept_edits_ok=True), M.ACCEPT_EDITS, Decision.ASK),
    ],
)
def test_apply_mode(pending: Pending, mode: PermissionMode, decision: Decision) -> None:
    v = apply_mode(pending, mode)
    assert v.decision is decision
    if mode is M.AUTO:
        # the classifier reviews ordinary asks; hard safety checks stay with a human
        assert v.kind is (ReasonKind.SAFETY if pending.human_only else ReasonKind.CLASSIFIER)
    if decision is Decision.DENY and mode is M.DONT_ASK:
        assert "dontAsk" in v.reason
