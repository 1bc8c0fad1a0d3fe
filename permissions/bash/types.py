"""What the bash analysis tells the engine about one command string."""

from __future__ import annotations

from dataclasses import dataclass

from permissions.types import Verdict

__all__ = ["BashAssessment", "SubcommandTrace"]


@dataclass(frozen=True, slots=True)
class SubcommandTrace:
    """One simple command as the analysis saw it, and how it was judged."""

    text: str  # the source text of the simple command
    argv: tuple[str, ...]  # after quote removal and wrapper stripping ('' for unknowable words)
    judgement: str  # e.g. "read-only", "allowed by Bash(git status:*)", "denied by ...", "write"


@dataclass(frozen=True, slots=True)
class BashAssessment:
    """The bash analysis of one command under the rules of a context (mode not yet applied).

    ``verdict`` is DENY when a deny rule matches any subcommand; ASK when an ask rule matches,
    a safety check fires (``verdict.safety`` set), or the analysis cannot model the command
    (``verdict.kind == ANALYSIS``); ALLOW when every subcommand is allowed by a rule or is
    read-only. Otherwise it is ASK with ``kind == MODE``: "needs permission", which the mode
    decides (acceptEdits may allow it when ``accept_edits_ok``, bypass allows it, ...).
    """

    verdict: Verdict
    read_only: bool  # every simple command is read-only (and nothing writes): parallel-safe
    accept_edits_ok: bool  # only mkdir/touch/rm/rmdir/mv/cp/sed-in-place inside working dirs
    subcommands: tuple[SubcommandTrace, ...] = ()
