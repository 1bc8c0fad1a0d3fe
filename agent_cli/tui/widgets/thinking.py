"""The model's thinking in the conversation: one dim line, "✻ Thinking…", until Ctrl+O.

A thinking block arrives whole as it closes (``ThinkingBlock``, before the answer it leads to);
a resumed conversation shows its stored blocks the same way (``tui.conversation``). The full
transcript (Ctrl+O, ``app.transcript_full``) shows what the model thought under the line; a
``redacted_thinking`` block (encrypted by the API) says so and has nothing more to show.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from agent_cli.tui.labels import collapse
from agent_cli.tui.safe import plain_text

__all__ = [
    "COLLAPSED",
    "REDACTED",
    "ThinkingLine",
    "refresh_thinking",
    "show_thinking_event",
]

COLLAPSED = "✻ Thinking…"
REDACTED = "✻ Thinking… (redacted)"
_REDACTED_NOTE = "The API sent this thinking encrypted; it goes back to the model unchanged."
_EMPTY_NOTE = "(the model returned no thinking text)"
_MAX_LINES = 2000  # as a tool result's expanded view: a huge block must not freeze the terminal


class ThinkingLine(Static):
    """One thinking block: collapsed to a line, expanded under the full transcript."""

    def __init__(self, text: str, redacted: bool = False) -> None:
        super().__init__("", markup=False, classes="thinking")
        self.thinking_text = text
        self.redacted = redacted

    @property
    def full(self) -> bool:
        """The app shows the full transcript (Ctrl+O)."""
        return bool(getattr(self.app, "transcript_full", False)) if self.is_attached else False

    def on_mount(self) -> None:
        self.refresh_view()

    def view(self, full: bool) -> Text:
        """The text shown: the line alone, or (``full``) the line and the thinking under it."""
        out = Text(REDACTED if self.redacted else COLLAPSED, style="dim italic")
        if not full:
            return out
        body = _REDACTED_NOTE if self.redacted else self.thinking_text.strip() or _EMPTY_NOTE
        shown, hidden = collapse(body, _MAX_LINES, width=20_000)
        for line in shown.splitlines():
            out.append("\n  ")
            out.append_text(plain_text(line, style="dim italic"))
        if hidden:
            out.append(f"\n  … +{hidden} lines", style="dim")
        return out

    def refresh_view(self) -> None:
        self.update(self.view(self.full))


async def show_thinking_event(app: Any, event: Any) -> bool:
    """Render a ``ThinkingBlock`` in ``app`` (a ``NerveApp``); False for any other event."""
    from agent_cli.loop.events import ThinkingBlock

    if not isinstance(event, ThinkingBlock):
        return False
    if app.interrupted:
        return True
    await app.end_text()  # a later block's thinking goes below the text before it
    app.working.streamed(len(event.text))
    await app.conversation.add(ThinkingLine(event.text, event.redacted))
    return True


def refresh_thinking(app: Any) -> None:
    """Ctrl+O changed: every thinking line renders again, collapsed or expanded."""
    for widget in app.query(ThinkingLine):
        widget.refresh_view()
