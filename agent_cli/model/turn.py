"""What one model call returns, and the one error it raises. No SDK import."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_cli.model.usage import Usage

__all__ = ["AssistantTurn", "ModelError"]


@dataclass(frozen=True)
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

    def to_message(self) -> dict[str, Any]:
        """The assistant message for the next request."""
        return {"role": "assistant", "content": list(self.content)}


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
