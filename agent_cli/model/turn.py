"""One model call: what it asks (``TurnRequest``), who is told as it streams
(``TurnCallbacks``), what it returns (``AssistantTurn``) and the one error it raises. No SDK
import."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

from agent_cli.model.usage import Usage
from tools.records import datarecord

if TYPE_CHECKING:
    from agent_cli.model.retry import RetryNotice
    from agent_cli.model.stream import BlockCallback, EventCallback, TextCallback, ToolUseCallback
    from agent_cli.model.thinking import ThinkingChoice
    from tools.messages import ContentBlock, Message

__all__ = ["AssistantTurn", "ModelError", "TurnCallbacks", "TurnRequest"]


@datarecord(frozen=True)
class TurnRequest:
    """What one assistant turn asks the model (``ModelClient.stream_turn``).

    ``model``/``max_tokens``: the configured ones when None; ``extra``: more body fields, over
    the built ones. ``thinking``: with extended thinking, when configured; a ``ThinkingChoice``
    (``/model``) overrides the configured thinking and effort.
    """

    system: str | Sequence[Mapping[str, Any]] | None
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]] = ()
    model: str | None = None
    max_tokens: int | None = None
    extra: Mapping[str, Any] | None = None
    thinking: bool | ThinkingChoice = False


@datarecord(frozen=True)
class TurnCallbacks:
    """Who is told what while a turn streams; each may be sync or async, or None.

    ``on_text(delta)``: each text delta. ``on_tool_use(id, name, input)``: each complete tool
    call, as its block closes. ``on_retry(RetryNotice)``: a failed attempt that will be tried
    again. ``on_block(block)``: each thinking or redacted_thinking block as it closes.
    ``on_event(event)``: every raw API stream event as it arrives (stream-json's partial
    messages).
    """

    on_text: TextCallback | None = None
    on_tool_use: ToolUseCallback | None = None
    on_retry: Callable[[RetryNotice], Any] | None = None
    on_block: BlockCallback | None = None
    on_event: EventCallback | None = None


@datarecord(frozen=True)
class AssistantTurn:
    """The assistant's answer as plain data, ready to append to the conversation.

    ``content``: API-shaped block dicts (``text``, ``tool_use``, ``thinking``...).
    ``partial``: the stream broke after some tool_use blocks were handed out; ``content`` holds
    only the blocks fully received and ``stop_reason`` is ``tool_use``, so the caller answers
    those tools and the conversation continues. ``error`` says what broke.
    ``aborted``: the caller's abort signal stopped the stream; ``content`` also keeps the text of
    an unfinished text block (the user saw it) but never an unfinished tool_use.
    ``warnings``: what the stream had wrong but the turn survived (garbage lines skipped...).
    """

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    message_id: str | None = None
    request_id: str | None = None  # the response's request-id (HTTP transports)
    partial: bool = False
    aborted: bool = False
    error: str | None = None
    attempts: int = 1
    warnings: tuple[str, ...] = ()

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    def to_message(self) -> Message:
        """The assistant message for the next request (its blocks as the API sent them)."""
        return {"role": "assistant", "content": cast("list[ContentBlock]", list(self.content))}


class ModelError(Exception):
    """A model call that failed for good: a clean one-line message for the user, no traceback.

    ``retryable`` is True when retries ran out (waiting and trying later may help), False for
    errors no retry can fix (bad request, authentication, permission, not found, too large).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        retryable: bool = False,
        attempts: int = 1,
    ) -> None:
        self.status = status
        self.error_type = error_type
        self.message = message
        self.request_id = request_id
        self.retryable = retryable
        self.attempts = attempts
        super().__init__(self.describe())

    def describe(self) -> str:
        head = "API error"
        if self.status is not None:
            head += f" {self.status}"
        if self.error_type:
            head += f" ({self.error_type})"
        text = f"{head}: {self.message}"
        if self.attempts > 1:
            text += f" [gave up after {self.attempts} attempts]"
        return text
