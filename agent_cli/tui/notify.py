"""Notification hooks from the app: a permission prompt is about to wait for the user (and the
bell rings if the settings ask for it, ``agent_cli.tui.bell``).

The hooks run in the background, so a slow one never delays the prompt it announces; what they
report (a crash, a timeout, ``systemMessage``) is shown as a warning. ``idle_prompt`` is fired
by the session itself (``agent_cli.session.notification``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.session.notification import PERMISSION_PROMPT, permission_message
from agent_cli.tui.bell import ring_bell

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["fire_notification", "notify_permission"]


def fire_notification(app: App[Any], notification_type: str, message: str) -> None:
    """Run the session's Notification hooks without waiting; their warnings are shown."""
    if not getattr(app, "session_ready", False):
        return
    notify = getattr(getattr(app, "session", None), "notification", None)
    say = getattr(app, "say", None)
    if notify is None:
        return

    async def run() -> None:
        for line in await notify(notification_type, message):
            if say is not None:
                say(line, "warning")

    app.run_worker(run(), group="notification", exit_on_error=False)


def notify_permission(app: App[Any], tool_name: str) -> None:
    """A permission prompt for ``tool_name`` is about to wait for the user."""
    ring_bell(app)
    fire_notification(app, PERMISSION_PROMPT, permission_message(tool_name))
