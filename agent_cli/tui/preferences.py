"""Settings the app itself applies, at start and when ``/config`` changes them: Claude Code's
``theme`` (``dark``, ``light``, ``*-daltonized``, ``*-ansi``) as a Textual theme, and ``verbose``
(every tool result shown whole, as Ctrl+O does). A value Nerve does not know changes nothing."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["THEMES", "apply_preferences"]

THEMES: Final[dict[str, str]] = {
    "dark": "textual-dark",
    "light": "textual-light",
    "dark-daltonized": "textual-dark",
    "light-daltonized": "textual-light",
    "dark-ansi": "ansi-dark",
    "light-ansi": "ansi-light",
}


def apply_preferences(app: Any, session: Any) -> None:
    """Give ``app`` the theme and the transcript view the session's settings name."""
    merged = getattr(getattr(session, "settings", None), "merged", None)
    extras = merged.extras() if merged is not None and hasattr(merged, "extras") else {}
    theme = THEMES.get(str(extras.get("theme")))
    if theme is not None and app.theme != theme:
        app.theme = theme
    verbose = extras.get("verbose")
    if isinstance(verbose, bool) and verbose != app.transcript_full:
        from agent_cli.tui.widgets.items import ToolCall

        app.transcript_full = verbose
        for widget in app.query(ToolCall):
            widget.refresh_result()
