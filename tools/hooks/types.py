"""The typed outcomes of hooks, shared by the hook runner and the pipeline/loop that use it.

A hook runner aggregates every matching handler of one event into one outcome; the pipeline
and the loop only ever see these types, never raw hook output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from permissions.types import Decision
from tools.records import datarecord

__all__ = [
    "HookEventOutcome",
    "HookRunnerProtocol",
    "PermissionRequestOutcome",
    "PostToolUseOutcome",
    "PreToolUseOutcome",
]


@datarecord(frozen=True, slots=True)
class HookEventOutcome:
    """Fields every event can produce (aggregated over all matching handlers)."""

    # continue: false from any hook stops the agent after this step
    stop: bool = False
    stop_reason: str | None = None
    # warnings shown to the user (systemMessage, non-blocking errors, timeouts)
    system_messages: tuple[str, ...] = ()
    # context for the model (additionalContext, plain stdout where the event allows it)
    additional_context: tuple[str, ...] = ()
    # decision: "block" (+ reason) for events that support it, or exit code 2
    blocked: bool = False
    block_reason: str | None = None
    # names of handlers that ran (for the UI and tests)
    ran: tuple[str, ...] = ()


@datarecord(frozen=True, slots=True)
class PreToolUseOutcome(HookEventOutcome):
    """PreToolUse: a decision (deny > ask > allow across hooks), reason, and rewritten input."""

    decision: Decision | None = None
    decision_reason: str | None = None
    updated_input: dict[str, Any] | None = None


@datarecord(frozen=True, slots=True)
class PostToolUseOutcome(HookEventOutcome):
    """PostToolUse: ``updated_output`` replaces the tool's result (MCP tools only)."""

    updated_output: Any = None


@datarecord(frozen=True, slots=True)
class PermissionRequestOutcome(HookEventOutcome):
    """PermissionRequest: a hook may answer the prompt (allow/deny) instead of the user."""

    decision: Decision | None = None
    message: str | None = None
    updated_input: dict[str, Any] | None = None
    interrupt: bool = False


class HookRunnerProtocol(Protocol):
    """What the pipeline and loop call. ``tools.hooks.runner.HookRunner`` implements it."""

    def has_hooks(self, event: str) -> bool:
        """Cheap check: is any handler configured for ``event``?"""
        ...

    async def pre_tool_use(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_use_id: str,
        permission_mode: str,
        agent: Mapping[str, str] | None = None,
    ) -> PreToolUseOutcome: ...

    async def post_tool_use(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_response: Any,
        tool_use_id: str,
        permission_mode: str,
        duration_ms: int | None = None,
        agent: Mapping[str, str] | None = None,
    ) -> PostToolUseOutcome: ...

    async def post_tool_use_failure(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_use_id: str,
        error: str,
        permission_mode: str,
        is_interrupt: bool = False,
        agent: Mapping[str, str] | None = None,
    ) -> HookEventOutcome: ...

    async def permission_request(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        permission_mode: str,
        suggestions: list[dict[str, Any]],
        agent: Mapping[str, str] | None = None,
    ) -> PermissionRequestOutcome: ...

    async def permission_denied(
        self, *, tool_name: str, tool_input: dict[str, Any], tool_use_id: str, reason: str
    ) -> HookEventOutcome: ...

    async def run_event(
        self, event: str, payload: dict[str, Any], *, match_value: str | None = None
    ) -> HookEventOutcome: ...
