"""Claude Code's control protocol over stream-json (what the Agent SDK speaks), both ways.

Each side may send ``{"type": "control_request", "request_id": ID, "request": {"subtype": ...}}``
and the other answers ``{"type": "control_response", "response": {"subtype": "success",
"request_id": ID, "response": {...}}}`` or ``{"subtype": "error", "request_id": ID, "error":
TEXT}``. Shapes read from ``claude_agent_sdk/_internal/query.py`` (0.2.189).

``ControlChannel`` is Nerve's end for the requests *it* sends (``can_use_tool``): each awaits
its answer; an error answer, or stdin closing first, is a ``ControlError`` — never a hang.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from collections.abc import Callable
from typing import Any

__all__ = [
    "ControlChannel",
    "ControlError",
    "error_response",
    "parse_line",
    "success_response",
]

_ABANDONED_KEPT = 256


class ControlError(Exception):
    """A control request that got an error answer, or none (stdin closed)."""


def success_response(request_id: str, response: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response or {}},
    }


def error_response(request_id: str, message: str) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": message},
    }


def parse_line(line: str) -> tuple[dict[str, Any] | None, str | None]:
    """One input line as a JSON object, or why it is not one (the reason names the problem)."""
    try:
        value = json.loads(line)
    except ValueError as exc:
        return None, f"not JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    if not isinstance(value.get("type"), str):
        return None, 'the object has no "type"'
    return value, None


class ControlChannel:
    """Sends Nerve's control requests and matches the SDK's answers to them."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._write = write
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._closed: str | None = None
        # told (subtype, True) when a request goes out and (subtype, False) when it is settled
        self.watch: Callable[[str, bool], None] | None = None
        # requests given up on (a hook's timeout, an interrupt): a late answer is named as such
        self._abandoned: dict[str, str] = {}

    async def request(self, subtype: str, **fields: Any) -> dict[str, Any]:
        """Send a request and return the ``response`` object of its success answer."""
        if self._closed is not None:
            raise ControlError(self._closed)
        request_id = f"nerve_req_{next(self._ids)}_{os.urandom(4).hex()}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        if self.watch is not None:
            self.watch(subtype, True)
        try:
            self._write(
                {
                    "type": "control_request",
                    "request_id": request_id,
                    "request": {"subtype": subtype, **fields},
                }
            )
            return await future
        finally:
            self._pending.pop(request_id, None)
            if future.cancelled() or not future.done():  # the waiter was cancelled
                future.cancel()
                self._abandoned[request_id] = subtype
                while len(self._abandoned) > _ABANDONED_KEPT:
                    del self._abandoned[next(iter(self._abandoned))]
            if self.watch is not None:
                self.watch(subtype, False)

    def answer(self, frame: dict[str, Any]) -> str | None:
        """A ``control_response`` from the SDK; returns a complaint if it answers nothing."""
        response = frame.get("response")
        if not isinstance(response, dict):
            return 'a control_response without a "response" object'
        request_id = response.get("request_id")
        future = self._pending.get(str(request_id))
        if future is None and str(request_id) in self._abandoned:
            subtype = self._abandoned.pop(str(request_id))
            return f"a late answer to the {subtype} request {request_id!r}, no longer waited for"
        if future is None or future.done():
            return f"a control_response for an unknown request id {request_id!r}"
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "error")))
        else:
            body = response.get("response")
            future.set_result(body if isinstance(body, dict) else {})
        return None

    def close(self, reason: str) -> None:
        """No answer will come (stdin closed): every waiting request fails with ``reason``."""
        self._closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError(reason))
