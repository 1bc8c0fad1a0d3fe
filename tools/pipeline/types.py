"""The data of one tool call through the pipeline: the call, its working state, its outcome.

``CallState`` is the small mutable record the fourteen steps pass along (each step reads and
writes a few fields, so each can be tested on its own); ``CallOutcome`` is the frozen result the
executor and the agent loop consume.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import field
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from permissions.types import RuleValue, Verdict
from tools.errors import ToolCancelled
from tools.messages import Message, ResultBlock, ToolResultBlock, tool_result_block
from tools.records import datarecord
from tools.result import ContextModifier, ToolResult

if TYPE_CHECKING:
    from tools.base import Tool
    from tools.context import AbortSignal, ToolUseContext
    from tools.hooks.types import PreToolUseOutcome

__all__ = [
    "CANCEL_GRACE_SECONDS",
    "INTERRUPTED_MESSAGE",
    "MAX_ERROR_CHARS",
    "CallOutcome",
    "CallState",
    "SafetyClassifier",
    "ToolCall",
    "call_header",
    "cancelled_outcome",
    "dump_input",
    "find_tool",
    "until_abort",
]

INTERRUPTED_MESSAGE = "[Request interrupted by user for tool use]"
# An error message the model (or a PostToolUseFailure hook) gets is cut to this many characters.
MAX_ERROR_CHARS = 2_000
# How long a cancelled tool may take to clean up (kill its subprocess) before we move on.
CANCEL_GRACE_SECONDS = 2.0

T = TypeVar("T")


@datarecord(frozen=True, slots=True)
class ToolCall:
    """One ``tool_use`` block as the model sent it."""

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_block(cls, block: Mapping[str, Any]) -> ToolCall:
        """From an API ``tool_use`` block; a non-dict input is kept so parsing can reject it."""
        raw = block.get("input")
        return cls(str(block.get("id", "")), str(block.get("name", "")), raw)  # type: ignore[arg-type]


class SafetyClassifier(Protocol):
    """The auto-mode safety classifier: a verdict for a call, or None for "no opinion"."""

    async def classify(
        self, tool_name: str, tool_input: dict[str, Any], ctx: ToolUseContext
    ) -> Verdict | None: ...


@datarecord(frozen=True, slots=True)
class CallOutcome:
    """Everything the loop needs from one call (see DESIGN.md, the pipeline).

    ``tool_result`` is the API block; ``output`` the tool's structured data (for transcripts);
    ``original_input`` is exactly what the model sent, ``effective_input`` what ``call`` got.
    ``rules_to_persist`` are the user's "always allow" rules: the caller saves them.
    """

    tool_use_id: str
    tool_name: str
    tool_result: ToolResultBlock
    original_input: dict[str, Any]
    effective_input: dict[str, Any] | None = None
    output: Any = None
    new_messages: tuple[Message, ...] = ()
    context_modifier: ContextModifier | None = None
    verdict: Verdict | None = None
    user_decided: bool = False
    rules_to_persist: tuple[RuleValue, ...] = ()
    stop_turn: bool = False
    stop_reason: str | None = None
    error_class: str | None = None
    persisted_path: Path | None = None
    duration_ms: float = 0.0

    @property
    def is_error(self) -> bool:
        return bool(self.tool_result.get("is_error"))

    @property
    def cancelled(self) -> bool:
        return self.error_class == ToolCancelled.code


@datarecord(slots=True)
class CallState:
    """The working record of one call; each pipeline step reads and writes a few fields."""

    call: ToolCall
    ctx: ToolUseContext
    started: float = field(default_factory=time.perf_counter)
    phase: str = ""
    tool: Tool[Any] | None = None
    parsed: Any = None  # the input ``call`` gets: the model's, or hook/user-updated
    backfilled: Any = None  # the copy with derived fields, for hooks and permissions
    input_updated: bool = False
    classifier_task: asyncio.Future[Verdict | None] | None = None
    pre_hook: PreToolUseOutcome | None = None
    verdict: Verdict | None = None
    user_decided: bool = False
    denial_feedback: str | None = None
    rules_to_persist: tuple[RuleValue, ...] = ()
    result: ToolResult | None = None
    content: str | list[ResultBlock] | None = None
    is_error: bool = False
    persisted_path: Path | None = None
    pre_messages: list[Message] = field(default_factory=list)
    tool_messages: list[Message] = field(default_factory=list)
    post_messages: list[Message] = field(default_factory=list)
    modifiers: list[ContextModifier] = field(default_factory=list)
    stop_turn: bool = False
    stop_reason: str | None = None
    error_class: str | None = None
    _hook_input: dict[str, Any] | None = None

    @property
    def tool_name(self) -> str:
        return self.tool.name if self.tool is not None else self.call.name

    def hook_input(self) -> dict[str, Any]:
        """The backfilled input as a dict (what hooks and the permission engine see)."""
        if self._hook_input is None:
            src = self.backfilled if self.backfilled is not None else self.parsed
            self._hook_input = dump_input(src) if src is not None else dict(self.call.input or {})
        return self._hook_input

    def set_input(self, parsed: Any, backfilled: Any) -> None:
        self.parsed = parsed
        self.backfilled = backfilled
        self._hook_input = None

    def stop(self, reason: str | None) -> None:
        self.stop_turn = True
        self.stop_reason = self.stop_reason or reason

    def outcome(self) -> CallOutcome:
        content = self.content if self.content is not None else ""
        block = tool_result_block(self.call.id, content, is_error=self.is_error)
        original = self.call.input if isinstance(self.call.input, dict) else {}
        effective: dict[str, Any] | None = None
        if self.result is not None or self.parsed is not None:
            effective = dump_input(self.parsed) if self.input_updated else original
        modifier = _compose(self.modifiers) if self.modifiers else None
        return CallOutcome(
            tool_use_id=self.call.id,
            tool_name=self.tool_name,
            tool_result=block,
            original_input=original,
            effective_input=effective,
            output=self.result.data if self.result is not None else None,
            new_messages=(*self.pre_messages, *self.tool_messages, *self.post_messages),
            context_modifier=modifier,
            verdict=self.verdict,
            user_decided=self.user_decided,
            rules_to_persist=self.rules_to_persist,
            stop_turn=self.stop_turn,
            stop_reason=self.stop_reason,
            error_class=self.error_class,
            persisted_path=self.persisted_path,
            duration_ms=(time.perf_counter() - self.started) * 1000.0,
        )


def _compose(modifiers: Sequence[ContextModifier]) -> ContextModifier:
    if len(modifiers) == 1:
        return modifiers[0]
    mods = tuple(modifiers)

    def composed(ctx: ToolUseContext) -> ToolUseContext:
        return reduce(lambda c, m: m(c), mods, ctx)

    return composed


def cancelled_outcome(call: ToolCall, message: str = INTERRUPTED_MESSAGE) -> CallOutcome:
    """The result of a call that never ran because the turn was aborted."""
    return CallOutcome(
        tool_use_id=call.id,
        tool_name=call.name,
        tool_result=tool_result_block(call.id, message, is_error=True),
        original_input=call.input if isinstance(call.input, dict) else {},
        error_class=ToolCancelled.code,
    )


def dump_input(model: Any) -> dict[str, Any]:
    """A parsed input as the dict the model would send (aliases, no unset defaults)."""
    if isinstance(model, BaseModel):
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return dict(model) if isinstance(model, Mapping) else {}


def find_tool(tools: Sequence[Tool[Any]], name: str) -> Tool[Any] | None:
    """By name first, then by alias (transcripts of renamed tools)."""
    for tool in tools:
        if tool.name == name:
            return tool
    for tool in tools:
        if name in tool.aliases:
            return tool
    return None


def call_header(tools: Sequence[Tool[Any]], name: str, tool_input: Any) -> str:
    """The line a call is shown under (``Bash(git status)``): the tool's own ``describe_call``,
    or the bare name for an unknown tool or an input it does not accept."""
    tool = find_tool(tools, name)
    if tool is None or not isinstance(tool_input, dict):
        return name
    try:
        return tool.describe_call(tool.input_model.model_validate(tool_input))
    except Exception:
        return name


async def until_abort(aw: Awaitable[T], abort: AbortSignal) -> T:
    """Await ``aw`` unless ``abort`` fires first; then cancel it and raise ``ToolCancelled``."""
    if abort.aborted:
        if asyncio.iscoroutine(aw):
            aw.close()
        raise ToolCancelled(INTERRUPTED_MESSAGE)
    task = asyncio.ensure_future(aw)
    waiter = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        raise
    if task.done():
        waiter.cancel()
        return task.result()
    task.cancel()
    # Give the tool a moment to clean up (kill its process); never wait forever for it.
    await asyncio.wait((task,), timeout=CANCEL_GRACE_SECONDS)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log "exception never retrieved"
    raise ToolCancelled(INTERRUPTED_MESSAGE)
