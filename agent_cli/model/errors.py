"""What went wrong with one attempt, classified the same way whichever transport made it.

Pure: no SDK, no httpx. A transport turns its own failures into ``AttemptError`` (an HTTP
status with its body and headers, an in-stream ``error`` event, a lost or stalled connection, a
stream that ended early or could not be read); the client decides from ``ErrorInfo`` alone
whether to retry, hand back a partial turn or give up.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_cli.model.retry import parse_retry_after
from tools.records import datarecord

__all__ = [
    "RETRYABLE_IN_STREAM",
    "STATUS_LABELS",
    "AttemptError",
    "BadStream",
    "ErrorInfo",
    "connection_lost",
    "error_fields",
    "in_stream_error",
    "status_error",
]

# In-stream error types worth asking again for (the API's own word: overloaded, transient).
RETRYABLE_IN_STREAM = frozenset({"overloaded_error", "api_error", "rate_limit_error"})
STATUS_LABELS = {
    401: "authentication failed",
    403: "permission denied",
    404: "not found",
    408: "request timeout",
    409: "conflict",
    413: "request too large",
    429: "rate limited",
    529: "overloaded",
}


@datarecord(frozen=True, slots=True)
class ErrorInfo:
    """A failure of one attempt, classified."""

    retryable: bool
    reason: str  # short, for the user ("rate limited (429): ...")
    status: int | None = None
    error_type: str | None = None
    message: str = ""
    retry_after: float | None = None
    request_id: str | None = None


class AttemptError(Exception):
    """One attempt failed; ``info`` says how (raised by transports and by the stream fold)."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.reason)
        self.info = info


class BadStream(Exception):
    """The stream broke the protocol (an event for a block never started, a second
    ``message_start``, bytes that are not UTF-8...): nothing after it can be trusted, so the
    attempt counts as a broken connection (retried, or a partial turn after a hand-out)."""


def error_fields(body: object, fallback: str) -> tuple[str | None, str]:
    """``(error.type, error.message)`` of an Anthropic-shaped error body."""
    if isinstance(body, Mapping):
        err = body.get("error")
        if isinstance(err, Mapping):
            return (str(err.get("type") or "") or None, str(err.get("message") or fallback))
    return None, fallback


def status_error(status: int, body: object, headers: Mapping[str, str], fallback: str) -> ErrorInfo:
    """An HTTP error status. ``headers`` must look names up case-insensitively (or be lower-case).

    408/409/429/5xx are retried, everything else (400 above all) is final; the server's explicit
    ``x-should-retry`` wins, as in the SDK (the scripted server says "false" on an unexpected
    request so a test fails once, loudly, instead of after every retry).
    """
    etype, message = error_fields(body, fallback)
    retryable = status in (408, 409, 429) or status >= 500
    label = STATUS_LABELS.get(status, "server error" if status >= 500 else "error")
    hint = headers.get("x-should-retry")
    if hint in ("true", "false"):
        retryable = hint == "true"
    return ErrorInfo(
        retryable,
        f"{label} ({status}): {message}",
        status,
        etype,
        message,
        parse_retry_after(headers),
        headers.get("request-id"),
    )


def in_stream_error(body: object, request_id: str | None = None) -> ErrorInfo:
    """An ``event: error`` inside a 200 stream (overloaded mid-answer, ...)."""
    etype, message = error_fields(body, str(body))
    label = f"{(etype or 'error').replace('_', ' ')} mid-stream"
    return ErrorInfo(
        etype in RETRYABLE_IN_STREAM,
        f"{label}: {message}",
        200,
        etype,
        message,
        None,
        request_id,
    )


def connection_lost(detail: str) -> ErrorInfo:
    """The connection broke, stalled or ended early: always worth asking again."""
    return ErrorInfo(True, f"connection lost: {detail}", message=detail)
