"""Permission data types: verdicts are data, ordered ALLOW < ASK < DENY, strictest wins.

Every other module of ``permissions`` (and the tool pipeline above it) speaks these types.
They are frozen dataclasses so a verdict can be logged, compared and sent to the UI as is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from pathlib import Path

__all__ = [
    "Decision",
    "PermissionContext",
    "PermissionMode",
    "PermissionRequest",
    "PermissionRule",
    "ReasonKind",
    "RuleBehavior",
    "RuleSource",
    "RuleValue",
    "SafetyCheck",
    "ToolKind",
    "Verdict",
    "strictest",
]


class Decision(IntEnum):
    """The outcome of a permission check. Larger is stricter; ``max()`` combines verdicts."""

    ALLOW = 0
    ASK = 1
    DENY = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class PermissionMode(StrEnum):
    """The seven permission modes (values are the settings/CLI spellings)."""

    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    BYPASS = "bypassPermissions"
    DONT_ASK = "dontAsk"
    AUTO = "auto"
    BUBBLE = "bubble"

    @classmethod
    def parse(cls, value: str) -> PermissionMode:
        """Parse a mode name; ``manual`` is accepted as an alias of ``default``."""
        if value == "manual":
            return cls.DEFAULT
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls if m is not cls.BUBBLE)  # sub-agents' own
            raise ValueError(
                f"unknown permission mode {value!r} (expected one of: {names})"
            ) from None


class RuleSource(StrEnum):
    """Where a rule came from; shown to the user with every decision it makes."""

    POLICY = "policySettings"
    CLI = "cliArg"
    LOCAL = "localSettings"
    PROJECT = "projectSettings"
    USER = "userSettings"
    SESSION = "session"
    COMMAND = "command"
    HOOK = "hook"
    SANDBOX = "sandbox"  # sandbox.filesystem.denyRead/denyWrite, folded into rules


class RuleBehavior(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"

    @property
    def decision(self) -> Decision:
        return {"allow": Decision.ALLOW, "ask": Decision.ASK, "deny": Decision.DENY}[self.value]


@dataclass(frozen=True, slots=True)
class RuleValue:
    """``Tool`` or ``Tool(content)``. ``content`` is None for a bare tool name."""

    tool_name: str
    content: str | None = None

    def __str__(self) -> str:
        return self.tool_name if self.content is None else f"{self.tool_name}({self.content})"


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One rule from one source.

    ``base_dir`` anchors path rules written with a leading ``/`` (the settings file's base:
    the project root for project settings, ``~/.nerve`` for user settings, the cwd for CLI and
    session rules). ``None`` means "the cwd".
    """

    source: RuleSource
    behavior: RuleBehavior
    value: RuleValue
    base_dir: Path | None = None

    def __str__(self) -> str:
        return str(self.value)

    def describe(self) -> str:
        return f"{self.behavior.value} rule {self.value} from {self.source.value}"


class ReasonKind(StrEnum):
    """Why a verdict was reached (for the prompt, logs and ``nerve permissions check``)."""

    RULE = "rule"
    MODE = "mode"
    READ_ONLY = "readOnly"
    SAFETY = "safetyCheck"
    TOOL = "tool"
    HOOK = "hook"
    ANALYSIS = "analysis"  # the bash analysis could not model the command with confidence
    WORKING_DIR = "workingDir"
    CLASSIFIER = "classifier"
    SANDBOX = "sandbox"  # confined by the OS sandbox (autoAllowBashIfSandboxed)
    USER = "user"
    DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class SafetyCheck:
    """A safety check that fired. ``classifier_approvable`` False means only a human may approve."""

    message: str
    classifier_approvable: bool = True


@dataclass(frozen=True, slots=True)
class Verdict:
    """A permission decision and everything needed to explain it."""

    decision: Decision
    reason: str
    kind: ReasonKind = ReasonKind.DEFAULT
    rule: PermissionRule | None = None
    safety: SafetyCheck | None = None
    suggestions: tuple[RuleValue, ...] = ()
    trace: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW

    def with_trace(self, *lines: str) -> Verdict:
        return Verdict(
            self.decision,
            self.reason,
            self.kind,
            self.rule,
            self.safety,
            self.suggestions,
            self.trace + tuple(lines),
        )


def strictest(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The strictest verdict (DENY > ASK > ALLOW); the first one wins a tie."""
    best: Verdict | None = None
    for v in verdicts:
        if best is None or v.decision > best.decision:
            best = v
    return best


@dataclass(frozen=True, slots=True)
class PermissionContext:
    """Everything the engine needs to judge one call: mode, rules and working directories."""

    mode: PermissionMode = PermissionMode.DEFAULT
    rules: tuple[PermissionRule, ...] = ()
    cwd: Path = field(default_factory=Path.cwd)
    additional_dirs: tuple[Path, ...] = ()
    bypass_available: bool = False
    home: Path = field(default_factory=Path.home)
    # The mode to return to when plan mode ends (set when plan mode is entered).
    mode_before_plan: PermissionMode | None = None

    @property
    def working_dirs(self) -> tuple[Path, ...]:
        return (self.cwd, *self.additional_dirs)

    def rules_for(self, behavior: RuleBehavior) -> tuple[PermissionRule, ...]:
        return tuple(r for r in self.rules if r.behavior is behavior)


class ToolKind(StrEnum):
    """How the engine reads a call's subject: which content rules and mode defaults apply."""

    BASH = "bash"  # subject: the command string (Bash(...) rules, bash analysis)
    READ = "read"  # subject: paths read (Read(...) rules; Grep/Glob/Read)
    EDIT = "edit"  # subject: paths written (Edit(...) rules; Edit/Write/NotebookEdit)
    FETCH = "fetch"  # subject: a URL (WebFetch(domain:...) rules)
    NETWORK = "network"  # sends data off the machine (WebSearch): read-only, yet it asks
    GENERIC = "generic"  # tool-name rules and Tool(param:value) rules only


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """One call as the engine sees it. ``paths`` are absolute (already backfilled)."""

    tool_name: str
    input: dict[str, object] = field(default_factory=dict)
    kind: ToolKind = ToolKind.GENERIC
    paths: tuple[Path, ...] = ()
    command: str | None = None
    url: str | None = None
    is_read_only: bool = False
    is_mcp: bool = False
    tool_verdict: Verdict | None = None
    # Runs inside a working OS sandbox that may allow it without asking
    # (autoAllowBashIfSandboxed): what would ask is allowed, after deny rules, ask rules and
    # safety checks. Never set without a working sandbox.
    sandboxed: bool = False
