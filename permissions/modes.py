"""What each permission mode does with a call that needs permission, and the Shift+Tab cycle.

The engine settles deny rules, ask rules, safety checks, allow rules and read-only calls; what
is left "needs permission" and arrives here as a :class:`Pending`. Two kinds of pending asks
are stronger than the mode: ask rules and safety checks no classifier may approve
(``human_only``) — bypass and auto leave them to a human, and only dontAsk (deny everything
that would ask) and plan (refuse writes) turn them into a denial.
"""

from __future__ import annotations

from dataclasses import dataclass

from permissions.types import Decision, PermissionMode, ReasonKind, Verdict

__all__ = ["MODE_CYCLE", "Pending", "apply_mode", "next_mode"]

MODE_CYCLE: tuple[PermissionMode, ...] = (
    PermissionMode.DEFAULT,
    PermissionMode.ACCEPT_EDITS,
    PermissionMode.PLAN,
)


@dataclass(frozen=True, slots=True)
class Pending:
    """A call that needs permission, before the mode decides.

    ``verdict`` is the ASK that default mode would show (reason, kind, rule, safety,
    suggestions). ``human_only``: an ask rule or a non-approvable safety check.
    ``accept_edits_ok``: acceptEdits may allow it (edits / simple fs commands inside the
    working dirs, nothing protected). ``read_only``: plan mode treats it as a read.
    """

    verdict: Verdict
    human_only: bool = False
    accept_edits_ok: bool = False
    read_only: bool = False


def _with(v: Verdict, decision: Decision, reason: str, kind: ReasonKind | None = None) -> Verdict:
    return Verdict(decision, reason, kind or v.kind, v.rule, v.safety, v.suggestions, v.trace)


def apply_mode(pending: Pending, mode: PermissionMode) -> Verdict:
    """The verdict ``mode`` gives a pending call (see the module docstring for the table)."""
    v = pending.verdict
    if mode is PermissionMode.DONT_ASK:
        return _with(v, Decision.DENY, f"dontAsk mode: {v.reason} — it would ask, so it is denied")
    if mode is PermissionMode.PLAN and not pending.read_only:
        return _with(
            v,
            Decision.DENY,
            f"plan mode: {v.reason}; this is not read-only, so it is refused until the plan "
            "is approved",
            ReasonKind.MODE,
        )
    if pending.human_only:
        return v  # ask rules and hard safety checks: a human decides, whatever the mode
    if mode is PermissionMode.BYPASS:
        return _with(
            v, Decision.ALLOW, f"bypassPermissions mode allows it ({v.reason})", ReasonKind.MODE
        )
    if mode is PermissionMode.ACCEPT_EDITS and pending.accept_edits_ok:
        return _with(
            v,
            Decision.ALLOW,
            f"acceptEdits mode allows edits inside the working directories ({v.reason})",
            ReasonKind.MODE,
        )
    if mode is PermissionMode.AUTO:
        return _with(
            v,
            Decision.ASK,
            f"auto mode: the classifier reviews it ({v.reason})",
            ReasonKind.CLASSIFIER,
        )
    return v  # default, acceptEdits (not an edit), plan (a read), bubble (the parent asks)


def next_mode(mode: PermissionMode, bypass_available: bool = False) -> PermissionMode:
    """Shift+Tab: default -> acceptEdits -> plan -> (bypassPermissions) -> default.

    Modes outside the cycle (auto, dontAsk, bubble) go back to default.
    """
    cycle = MODE_CYCLE + ((PermissionMode.BYPASS,) if bypass_available else ())
    if mode not in cycle:
        return PermissionMode.DEFAULT
    return cycle[(cycle.index(mode) + 1) % len(cycle)]
