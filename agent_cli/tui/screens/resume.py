"""The /resume picker: stored sessions with title, time and size; type to filter, Enter resumes."""

from __future__ import annotations

import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.tui.safe import clean

__all__ = ["ResumeScreen", "session_label"]


def _ago(mtime: Any, now: float) -> str:
    try:
        delta = max(0.0, now - float(mtime))
    except (TypeError, ValueError):
        return "?"
    for unit, seconds in (("d", 86400), ("h", 3600), ("m", 60)):
        if delta >= seconds:
            return f"{int(delta // seconds)}{unit} ago"
    return "just now"


def _size(size: Any) -> str:
    if not isinstance(size, int | float):
        return "?"
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def session_label(info: dict[str, Any], now: float | None = None) -> str:
    """``title · 3h ago · 12 KB`` for one stored session."""
    title = str(info.get("title") or info.get("first_prompt") or info.get("session_id") or "?")
    title = title.splitlines()[0] if title.strip() else "(untitled)"
    if len(title) > 60:
        title = title[:59] + "…"
    stamp = _ago(info.get("mtime"), time.time() if now is None else now)
    return f"{title:<60}  {stamp:>8}  {_size(info.get('size'))}"


class ResumeScreen(ModalScreen[str | None]):
    """Pick a session; dismisses with its id, or None on Esc."""

    BINDINGS = [
        Binding("escape", "cancel", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
    ]

    def __init__(self, sessions: list[dict[str, Any]]) -> None:
        super().__init__()
        self.sessions = sessions
        self.shown: list[dict[str, Any]] = list(sessions)

    def compose(self) -> ComposeResult:
        with Vertical(id="resume-box"):
            yield Static(
                "Resume a session (type to filter, Enter to resume, Esc to cancel)", markup=False
            )
            yield Input(placeholder="Filter…", id="resume-filter")
            yield OptionList(id="resume-list", markup=False)

    def on_mount(self) -> None:
        self._fill()
        self.query_one("#resume-filter", Input).focus()

    def _fill(self) -> None:
        olist = self.query_one("#resume-list", OptionList)
        olist.clear_options()
        olist.add_options([Option(clean(session_label(s))) for s in self.shown])
        if self.shown:
            olist.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        needle = event.value.lower().strip()
        self.shown = [
            s
            for s in self.sessions
            if not needle
            or needle in str(s.get("title", "")).lower()
            or needle in str(s.get("session_id", "")).lower()
        ]
        self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        olist = self.query_one("#resume-list", OptionList)
        if self.shown and olist.highlighted is not None:
            self.dismiss(str(self.shown[olist.highlighted].get("session_id")))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(str(self.shown[event.option_index].get("session_id")))

    def action_move(self, delta: int) -> None:
        olist = self.query_one("#resume-list", OptionList)
        if self.shown:
            olist.highlighted = ((olist.highlighted or 0) + delta) % len(self.shown)

    def action_cancel(self) -> None:
        self.dismiss(None)
