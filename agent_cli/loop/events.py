"""Events the agent loop yields: the only thing a UI (TUI or print mode) consumes."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from tools.records import datarecord

__all__ = [
    "AgentEvent",
    "CompactProgress",
    "ErrorEvent",
    "Notice",
    "PermissionAsked",
    "PermissionDecided",
    "RetryEvent",
    "TextDelta",
    "ThinkingBlock",
    "ToolFinished",
    "ToolProgress",
    "ToolStarted",
    "TurnFinished",
    "api_error_event",
    "retry_event",
]


@datarecord(frozen=True, slots=True)
class TextDelta:
    text: str


@datarecord(frozen=True, slots=True)
class ThinkingBlock:
    """A thinking block the model closed (before its answer): ``text`` is what it thought,
    empty for a ``redacted_thinking`` block (encrypted; only the API can read it)."""

    text: str
    redacted: bool = False

    @classmethod
    def of(cls, block: dict[str, Any]) -> ThinkingBlock:
        if block.get("type") == "redacted_thinking":
            return cls("", redacted=True)
        return cls(str(block.get("thinking") or ""))


@datarecord(frozen=True, slots=True)
class ToolStarted:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    header: str  # e.g. "Bash(git status)"


@datarecord(frozen=True, slots=True)
class ToolProgress:
    """``text`` is the tool's whole current progress view (replace what was shown, not append)."""

    tool_use_id: str
    progress: Any
    text: str = ""


@datarecord(frozen=True, slots=True)
class ToolFinished:
    tool_use_id: str
    name: str
    content: Any  # the tool_result content (string or blocks)
    is_error: bool
    summary: str = ""
    output: Any = None  # structured output (for transcripts and rich rendering)
    duration_ms: int = 0


@datarecord(frozen=True, slots=True)
class PermissionAsked:
    tool_use_id: str
    tool_name: str
    reason: str


@datarecord(frozen=True, slots=True)
class PermissionDecided:
    tool_use_id: str
    tool_name: str
    decision: str  # "allow" | "ask" | "deny"
    reason: str
    by: str  # "rule" | "mode" | "user" | "hook" | ...
    rule: str | None = None


@datarecord(frozen=True, slots=True)
class RetryEvent:
    """The model call failed and will be tried again in ``delay_s`` seconds."""

    attempt: int  # the attempt that failed, 1-based
    delay_s: float
    reason: str
    endpoint: str = ""  # where the next attempt goes
    max_attempts: int = 0  # 0: unknown
    fallback_model: str | None = None  # the request moved to --fallback-model (overload)
    status: int | None = None  # the failed attempt's HTTP status, when it had one
    error_type: str | None = None  # the API's error type, when it said


def retry_event(notice: Any) -> RetryEvent:
    """The event for the model client's ``RetryNotice``."""
    return RetryEvent(
        notice.attempt,
        notice.delay,
        notice.reason,
        getattr(notice, "endpoint", ""),
        getattr(notice, "max_attempts", 0),
        getattr(notice, "fallback_model", None),
        getattr(notice, "status", None),
        getattr(notice, "error_type", None),
    )


@datarecord(frozen=True, slots=True)
class Notice:
    text: str
    level: str = "info"  # "info" | "warning"


@datarecord(frozen=True, slots=True)
class CompactProgress:
    """A compaction's progress, one event per step; ``text`` is what to show the user.

    ``stage``: started | summarizing | done, or how it ended without compacting: nothing (too
    little to compact), blocked (a PreCompact hook), failed (the conversation is unchanged),
    cancelled (Esc; unchanged). ``tokens``: the context size (started, done) or the summary's
    size so far (summarizing). ``trigger``: auto | manual.
    """

    stage: str
    text: str
    tokens: int = 0
    trigger: str = "auto"

    @property
    def final(self) -> bool:
        return self.stage not in ("started", "summarizing")


@datarecord(frozen=True, slots=True)
class ErrorEvent:
    message: str
    fatal: bool = False
    status: int | None = None  # an API error's HTTP status (None: no answer, or not the API's)
    error_type: str | None = None  # the API's error type (``invalid_request_error``...)
    request_id: str | None = None  # the failed response's request-id


def api_error_event(exc: Any) -> ErrorEvent:
    """The event for a ``ModelError`` that ended the turn: its message, status, type, id."""
    return ErrorEvent(
        exc.describe(),
        status=getattr(exc, "status", None),
        error_type=getattr(exc, "error_type", None),
        request_id=getattr(exc, "request_id", None),
    )


@datarecord(frozen=True, slots=True)
class TurnFinished:
    stop_reason: str
    num_turns: int
    usage: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    is_error: bool = False
    result_text: str = ""


AgentEvent = (
    TextDelta
    | ThinkingBlock
    | ToolStarted
    | ToolProgress
    | ToolFinished
    | PermissionAsked
    | PermissionDecided
    | RetryEvent
    | Notice
    | CompactProgress
    | ErrorEvent
    | TurnFinished
)
