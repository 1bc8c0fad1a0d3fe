"""``system``/``session_state_changed`` frames: when the session works, waits, and is done.

The Agent SDK sets ``CLAUDE_CODE_SDK_READS_SESSION_STATE=1`` for the CLI it starts; with hooks,
``can_use_tool`` or SDK MCP servers it then keeps stdin open after a ``result`` until the state
is ``idle`` (another turn may still need its answers). States, as Claude Code sends them:
``running`` when a turn starts, ``requires_action`` while a ``can_use_tool`` request waits for
the SDK, ``idle`` after the ``result`` of the last prompt received (none is queued). Only a
change is sent. Those frames carry ``sdk_host_only: true`` (the SDK keeps them out of the
caller's stream) unless ``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`` asks for them to be shown.
Neither variable set: no frame at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SessionStateFrames", "env_truthy"]

_READS = "CLAUDE_CODE_SDK_READS_SESSION_STATE"
_EMIT = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"


def env_truthy(value: str | None) -> bool:
    """Claude Code's reading of a flag variable: 1, true, yes, on (any case)."""
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


class SessionStateFrames:
    """Sends the session's state changes through ``write`` (see module docstring)."""

    def __init__(self, system: Callable[..., None], env: Mapping[str, str]) -> None:
        self._system = system  # writes a ``system`` frame of a subtype (StreamJsonWriter.system)
        shown = env_truthy(env.get(_EMIT))
        self.enabled = shown or env_truthy(env.get(_READS))
        self._host_only = not shown
        self._state: str | None = None
        self._turn = False
        self._asking = 0

    def turn_started(self) -> None:
        self._turn = True
        self._send("requires_action" if self._asking else "running")

    def turn_finished(self, more_queued: bool) -> None:
        """After the turn's ``result``; ``idle`` unless another prompt is waiting."""
        self._turn = False
        if not more_queued:
            self._send("idle")

    def watch(self, subtype: str, waiting: bool) -> None:
        """The control channel sent a request (``waiting``) or got its answer."""
        if subtype != "can_use_tool":
            return
        self._asking = self._asking + 1 if waiting else max(0, self._asking - 1)
        if self._asking:
            self._send("requires_action")
        elif self._turn:
            self._send("running")

    def _send(self, state: str) -> None:
        if not self.enabled or state == self._state:
            return
        self._state = state
        extra: dict[str, Any] = {"sdk_host_only": True} if self._host_only else {}
        self._system("session_state_changed", state=state, **extra)
