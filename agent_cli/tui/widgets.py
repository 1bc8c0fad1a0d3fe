"""Conversation widgets: user prompts, tool calls, notices, status.

The Markdown widgets (``AssistantMessage``, ``MarkdownText``) live in ``agent_cli.tui.markdown``,
imported on first use: Textual's Markdown pulls markdown_it and Rich's Markdown pulls pygments,
which the first frame does not need. They are still reachable as attributes of this module.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static

from agent_cli.slash.views import content_text
from agent_cli.tui.labels import collapse
from agent_cli.tui.safe import ansi_text, plain_text
from tools.terminal_text import neutralize

__all__ = [
    "NoticeLine",
    "StatusBar",
    "StreamStats",
    "ToolCall",
    "UserMessage",
]

PROGRESS_LINES = 6  # Bash: its last 5 lines and the count line
TICK_S = 1.0  # a running call's elapsed time is redrawn this often
COLLAPSED_LINES = 3
EXPANDED_MAX_LINES = 2000  # a 1 MB result must not freeze the terminal


class UserMessage(Static):
    """A submitted prompt (shown verbatim: prompts are not markup)."""

    def __init__(self, text: str) -> None:
        super().__init__(plain_text("> " + text), markup=False, classes="user")
        self.prompt_text = text


class NoticeLine(Static):
    """A one-line notice in the conversation: info, warning, error, retry, interrupted."""

    def __init__(self, text: str, level: str = "info") -> None:
        super().__init__(plain_text(text), markup=False, classes=f"notice {level}")
        self.notice_text = text


@dataclass
class StreamStats:
    """Deltas handed to assistant widgets and deltas rendered, over the whole app."""

    received: int = 0
    rendered: int = 0

    @property
    def backlog(self) -> int:
        return self.received - self.rendered


def __getattr__(name: str) -> Any:
    # The Markdown widgets load on first use (see the module docstring).
    if name in ("AssistantMessage", "MarkdownText"):
        from agent_cli.tui import markdown

        return getattr(markdown, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ToolCall(Vertical, can_focus=True):
    """One tool call: header, live progress, then a collapsed result (Enter or click toggles)."""

    def __init__(self, tool_use_id: str, header: str) -> None:
        super().__init__(classes="tool running")
        self.tool_use_id = tool_use_id
        self.header = header
        self.result_text: str | None = None
        self.is_error = False
        self.expanded = False
        self._tail: deque[str] = deque(maxlen=PROGRESS_LINES)
        self._noted = False  # a note (waiting, denied) stands until progress or the result
        self._ticker: Timer | None = None
        self.started = time.monotonic()
        self._header = Static(plain_text("● " + header), markup=False, classes="tool-header")
        self._body = Static("", markup=False, classes="tool-body")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._body

    def on_mount(self) -> None:
        if self.result_text is None:
            self._ticker = self.set_interval(TICK_S, self._render_running)

    def waiting(self) -> None:
        """The call waits for the user's answer: no running time is shown."""
        self._noted = True

    def restart_clock(self) -> None:
        """The call starts running now (it may have waited for permission until now)."""
        self.started = time.monotonic()
        self._noted = False

    def _render_running(self) -> None:
        """Progress lines with the elapsed time on the last; "Running…" before any progress."""
        if self.result_text is not None or self._noted:
            return
        seconds = int(time.monotonic() - self.started)
        lines = ["  " + ln for ln in self._tail]
        if lines:
            lines[-1] += f" · {seconds}s"
        elif seconds >= 1:
            lines = [f"  ⎿ Running… ({seconds}s)"]
        self._body.update(ansi_text("\n".join(lines), style="dim"))

    def progress(self, text: str) -> None:
        """Show the last few lines of the tool's current progress rendering while it runs.

        ``ToolProgress.text`` is the tool's whole current view (Bash: its last lines and a
        count), so it replaces what was shown rather than adding to it.
        """
        if self.result_text is not None or not text:
            return
        self._tail.clear()
        for line in text.splitlines():
            self._tail.append(line[:300])
        self._noted = False
        self._render_running()

    def note(self, text: str) -> None:
        """A line under the header before any result (e.g. "Waiting for permission")."""
        if self.result_text is None:
            self._noted = True
            self._body.update(plain_text("  ⎿ " + text, style="dim"))

    def finish(
        self, content: object, is_error: bool, summary: str = "", *, expanded: bool = False
    ) -> None:
        """Show the result, collapsed (or ``expanded``: a todo checklist is shown whole)."""
        text = neutralize(content_text(content), keep_sgr=True)  # lines counted as shown
        if not text.strip():
            text = summary or "(no output)"
        self.result_text = text
        self.is_error = is_error
        self.expanded = expanded
        if self._ticker is not None:
            self._ticker.stop()
        self.remove_class("running")
        self.add_class("error" if is_error else "done")
        self._render_result()

    def interrupt(self) -> None:
        """Mark a call that never finished because the turn was interrupted."""
        if self.result_text is None:
            self.finish("Interrupted", True)

    def toggle(self) -> None:
        """Expand or collapse the result."""
        if self.result_text is None:
            return
        self.expanded = not self.expanded
        self._render_result()

    def _render_result(self) -> None:
        assert self.result_text is not None
        limit = EXPANDED_MAX_LINES if self.expanded else COLLAPSED_LINES
        shown, hidden = collapse(self.result_text, limit)
        lines = shown.splitlines() or [""]
        body = "\n".join(("  ⎿ " if i == 0 else "    ") + ln for i, ln in enumerate(lines))
        if hidden:
            verb = "expand" if not self.expanded else "show more"
            body += f"\n    … +{hidden} lines (enter to {verb})"
        # Output keeps its colours; no control sequence reaches the terminal (tui.safe).
        self._body.update(ansi_text(body, style="red" if self.is_error else ""))

    def on_click(self, event: events.Click) -> None:
        self.toggle()

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            self.toggle()


class StatusBar(Static):
    """The bottom line: mode, model, context, cost, background tasks."""

    def __init__(self) -> None:
        super().__init__("", markup=False, id="status")

    def show(self, text: str) -> None:
        self.update(plain_text(text))
