"""Claude Code's Notification hook event: a permission prompt waits (``permission_prompt``,
fired by the app as it shows the prompt) or the session has waited for input a while
(``idle_prompt``, fired here).

``idle_prompt`` fires once after a turn of a session with a UI attached (one that set a
permission handler; print mode has none) when no new turn started within
``NERVE_IDLE_NOTIFICATION_S`` seconds (default 60, Claude Code's threshold). Notification hooks
cannot block; what they report (a crash, a timeout, ``systemMessage``) is returned as lines for
the UI (``idle_prompt``'s join the session's warnings, shown with the next turn).

``Notifications`` is the part of ``AgentSession`` that fires them: it reads the hooks and the
mode from the loop's live context, and whether a UI is attached from the session's
``Approvals``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop
    from agent_cli.session.permission_admin import Approvals

__all__ = [
    "DEFAULT_IDLE_S",
    "IDLE_ENV",
    "IDLE_MESSAGE",
    "IDLE_PROMPT",
    "PERMISSION_PROMPT",
    "Notifications",
    "idle_delay",
    "permission_message",
]

PERMISSION_PROMPT = "permission_prompt"
IDLE_PROMPT = "idle_prompt"
IDLE_MESSAGE = "Nerve is waiting for your input"
IDLE_ENV = "NERVE_IDLE_NOTIFICATION_S"
DEFAULT_IDLE_S = 60.0


def permission_message(tool_name: str) -> str:
    """The message of a ``permission_prompt`` notification (Claude Code's wording, our name)."""
    return f"Nerve needs your permission to use {tool_name}"


def idle_delay(environ: Mapping[str, str] | None = None) -> float:
    """The idle threshold in seconds (``NERVE_IDLE_NOTIFICATION_S``; a bad value: 60)."""
    raw = (os.environ if environ is None else environ).get(IDLE_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_IDLE_S
    return value if value > 0 else DEFAULT_IDLE_S


class Notifications:
    """The Notification hooks of ``loop``'s session; ``idle_prompt``'s lines go to ``warnings``
    (the session's list, shown with the next turn)."""

    def __init__(self, loop: AgentLoop, approvals: Approvals, warnings: list[str]) -> None:
        self._loop = loop
        self._approvals = approvals
        self._warnings = warnings
        self._idle_task: asyncio.Task[None] | None = None

    async def notify(
        self, notification_type: str, message: str, title: str | None = "Nerve"
    ) -> list[str]:
        """Run the Notification hooks matching ``notification_type``; their messages."""
        ctx = self._loop.ctx
        hooks = ctx.hooks
        if hooks is None or not hooks.has_hooks("Notification"):
            return []
        payload: dict[str, object] = {
            "message": message,
            "notification_type": notification_type,
            "permission_mode": ctx.permissions.mode.value,
        }
        if title:
            payload["title"] = title
        try:
            outcome = await hooks.run_event("Notification", payload)
        except Exception as exc:  # a notification never breaks the prompt it announces
            return [f"Notification hook error: {type(exc).__name__}: {exc}"]
        return list(outcome.system_messages)

    def arm_idle(self) -> None:
        """A turn ended: count down to ``idle_prompt`` (only with a UI attached and hooks)."""
        self.disarm_idle()
        hooks = self._loop.ctx.hooks
        if not self._approvals.attached or hooks is None or not hooks.has_hooks("Notification"):
            return
        self._idle_task = asyncio.get_running_loop().create_task(self._idle_after(idle_delay()))

    def disarm_idle(self) -> None:
        """A turn starts or the session closes: no ``idle_prompt`` for the last wait."""
        if self._idle_task is not None:
            self._idle_task.cancel()
            self._idle_task = None

    async def _idle_after(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        self._idle_task = None  # fired: the next turn's end arms a new one
        self._warnings.extend(await self.notify(IDLE_PROMPT, IDLE_MESSAGE))
