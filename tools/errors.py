"""Errors of the tool system, split by who they are for.

* ``ToolError`` and its subclasses are for the model: the pipeline turns them into an
  ``is_error`` tool_result carrying ``message``; the model may retry.
* ``FatalError`` is for the user: it is never turned into a result, it unwinds the turn
  (use sparingly — e.g. the session directory vanished).

``error_class(exc)`` names an exception for telemetry with a stable, message-free code, so no
path, command or user text ever leaves the process through it.
"""

from __future__ import annotations

import asyncio
import re

__all__ = [
    "FatalError",
    "InputError",
    "PermissionDeniedError",
    "ToolCancelled",
    "ToolError",
    "ToolExecutionError",
    "ToolTimeoutError",
    "error_class",
    "safe_identifier",
]


class ToolError(Exception):
    """A model-facing, retryable failure of one tool call; ``message`` is what the model sees."""

    code = "tool_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InputError(ToolError):
    """The input did not parse or did not make sense (schema or semantic validation)."""

    code = "validation"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            # An instance-level refinement (e.g. "unknown_tool"); still message-free.
            self.code = f"validation.{safe_identifier(code)}"


class PermissionDeniedError(ToolError):
    """The call was not allowed (rule, hook, mode, classifier or the user)."""

    code = "permission_denied"


class ToolExecutionError(ToolError):
    """The tool ran and failed in a way it chose to explain to the model."""

    code = "tool_error"


class ToolTimeoutError(ToolError):
    """The tool did not finish within its time limit."""

    code = "timeout"


class ToolCancelled(ToolError):
    """The call was interrupted (Ctrl+C / abort) before or while it ran."""

    code = "cancelled"


class FatalError(Exception):
    """Not a tool result: unwinds the whole turn. Reserved for a broken session."""


_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def safe_identifier(name: str, *, limit: int = 64) -> str:
    """Reduce a (possibly generated or odd) identifier to ``[A-Za-z0-9_]``, bounded in length."""
    cleaned = _UNSAFE.sub("_", name).strip("_")[:limit]
    return cleaned or "unknown"


def error_class(exc: BaseException) -> str:
    """A telemetry-safe class for ``exc``: a stable code, never the exception's message."""
    if isinstance(exc, ToolError):
        return exc.code
    if isinstance(exc, asyncio.CancelledError):
        return ToolCancelled.code
    if isinstance(exc, TimeoutError):
        return ToolTimeoutError.code
    return f"tool_exception.{safe_identifier(type(exc).__name__)}"
