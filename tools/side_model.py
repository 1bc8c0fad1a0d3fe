"""The side-model port: a tool asks a model one question outside the conversation.

WebFetch applies its prompt to a page with the fast model; WebSearch runs the API's server-side
web search. ``tools`` cannot import the model client (it lives in ``agent_cli``), so the tool
layer declares this port and finds the session's implementation in
``ctx.options.services.side_model`` (``agent_cli.session.side_model`` provides it, on the
session's client, its tokens counted in the session's usage). Sub-agents share it: their
options are a copy of the parent's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tools.records import datarecord

if TYPE_CHECKING:
    from tools.context import AbortSignal, ToolUseContext

__all__ = [
    "FAST",
    "MAIN",
    "SideModel",
    "SideModelError",
    "SideReply",
    "SideRequest",
    "get_side_model",
]

FAST = "fast"  # the session's small fast model
MAIN = "main"  # the session's current model


@datarecord(frozen=True, slots=True)
class SideRequest:
    """One request: ``model`` is FAST, MAIN or an explicit model id; ``tools`` pass through
    as API tool specs (server tools such as ``web_search_20250305`` included)."""

    system: str
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] = ()
    model: str = FAST
    max_tokens: int = 4096


@datarecord(frozen=True, slots=True)
class SideReply:
    """The answer as API-shaped content blocks (text, server_tool_use, web_search_tool_result...)."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    model: str = ""

    @property
    def text(self) -> str:
        return "".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")


class SideModelError(Exception):
    """The side request failed for good (after the client's own retries), or was cut off.

    ``status`` and ``error_type`` are the API's when it answered with an error (a 400
    ``invalid_request_error`` for a tool the endpoint does not know, ...).
    """

    def __init__(
        self, message: str, *, status: int | None = None, error_type: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type


@runtime_checkable
class SideModel(Protocol):
    """Answers one side request; raises SideModelError (or CancelledError on abort)."""

    async def query(self, request: SideRequest, abort: AbortSignal) -> SideReply: ...


def get_side_model(ctx: ToolUseContext) -> SideModel | None:
    """The session's side model, or None outside a session (a bare pipeline, a test)."""
    return ctx.options.services.side_model
