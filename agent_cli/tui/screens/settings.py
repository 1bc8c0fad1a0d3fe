"""Open ``/config``'s and ``/permissions``' screens over the app (each module loads on use)."""

from __future__ import annotations

from typing import Any

__all__ = ["open_view"]


def open_view(app: Any, name: str) -> bool:
    """Push the screen for ``name``; False for a name without one or without a session."""
    if not getattr(app, "session_ready", False):
        return False
    if name == "config":
        from agent_cli.tui.screens.config import ConfigScreen

        app.push_screen(ConfigScreen(app.session))
        return True
    if name == "permissions":
        from agent_cli.tui.screens.permissions import PermissionsScreen

        app.push_screen(PermissionsScreen(app.session))
        return True
    return False
