"""The terminal bell, rung when the app starts waiting for the user (a permission prompt, a
question, a finished turn) if the settings ask for it: Claude Code's
``"preferredNotifChannel": "terminal_bell"`` (``nerve config set -g preferredNotifChannel
terminal_bell``). Any other value, or none, keeps the app quiet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["BELL_CHANNEL", "bell_wanted", "ring_bell"]

BELL_CHANNEL: Final[str] = "terminal_bell"


def bell_wanted(session: Any) -> bool:
    """Whether the session's settings choose the terminal bell for notifications."""
    merged = getattr(getattr(session, "settings", None), "merged", None)
    extras = merged.extras() if merged is not None and hasattr(merged, "extras") else {}
    return extras.get("preferredNotifChannel") == BELL_CHANNEL


def ring_bell(app: App[Any]) -> None:
    """The app starts waiting for the user (a prompt, a question, a finished turn): ring the
    bell if the settings ask for it."""
    if getattr(app, "session_ready", False) and bell_wanted(getattr(app, "session", None)):
        app.bell()
