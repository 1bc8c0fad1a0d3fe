"""Conversation widgets: user prompts, tool calls, notices, status.

The Markdown widgets (``AssistantMessage``, ``MarkdownText``) live in
``agent_cli.tui.widgets.markdown``, imported on first use: Textual's Markdown pulls markdown_it
and Rich's Markdown pulls pygments, which the first frame does not need.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static

from agent_cli.slash.views import content_text
from agent_cli.tui.labels import collapse, fit_status
from agent_cli.tui.safe import ansi_text, plain_text
from tools.records import datarecord
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
OPEN_LINES = 10  # a result this short is shown whole
COLLAPSED_LINES = 5  # a longer one shows this many lines until expanded
_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}
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


@datarecord
class StreamStats:
    """Deltas handed to assistant widgets and deltas rendered, over the whole app."""

    received: int = 0
    rendered: int = 0

    @property
    def backlog(self) -> int:
        return self.received - self.rendered


class ToolCall(Vertical, can_focus=True):
    """One tool call: header, live progress, then a collapsed result (Enter or click toggles)."""

    def __init__(self, tool_use_id: str, header: str) -> None:
        super().__init__(classes="tool running")
        self.tool_use_id = tool_use_id
        self.header = header
        self.result_text: str | None = None
        self.is_error = False
        self.expanded = False
        self.detail_text: str | None = None
        self.tool_name = ""  # set from ToolStarted (a stored call has only its header)
        self.tool_input: dict[str, Any] = {}
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
        self,
        content: object,
        is_error: bool,
        summary: str = "",
        *,
        expanded: bool = False,
        detail: object = None,
    ) -> None:
        """Show the result, collapsed when long (or ``expanded``: a todo checklist is shown
        whole). ``detail``: what the full transcript (Ctrl+O) shows instead (the model's text
        under a summary such as "Read 42 lines")."""
        text = neutralize(content_text(content), keep_sgr=True)  # lines counted as shown
        if not text.strip():
            text = summary or "(no output)"
        self.result_text = text
        more = neutralize(content_text(detail), keep_sgr=True) if detail is not None else ""
        self.detail_text = more if more.strip() else None
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

    @property
    def full(self) -> bool:
        """The app shows the full transcript (Ctrl+O)."""
        return bool(getattr(self.app, "transcript_full", False)) if self.is_attached else False

    def refresh_result(self) -> None:
        """Render the result again (the full-transcript toggle changed)."""
        if self.result_text is not None:
            self._render_result()

    def _render_result(self) -> None:
        assert self.result_text is not None
        full = self.full
        text = self.detail_text if full and self.detail_text is not None else self.result_text
        long = len(text.rstrip("\n").splitlines()) > OPEN_LINES
        limit = EXPANDED_MAX_LINES if self.expanded or full or not long else COLLAPSED_LINES
        shown, hidden = collapse(text, limit)
        lines = shown.splitlines() or [""]
        if hidden:
            lines.append(f"… +{hidden} lines" + (" (ctrl+o to expand)" if not full else ""))
        diff = not self.is_error and len(lines) > 1 and lines[1].startswith("@@")
        body = Text()
        for i, ln in enumerate(lines):
            style = "red" if self.is_error else (_DIFF_STYLES.get(ln[:1], "") if diff else "")
            body.append("\n" if i else "")
            body.append("  ⎿ " if i == 0 else "    ")
            # Output keeps its colours; no control sequence reaches the terminal (tui.safe).
            body.append_text(ansi_text(ln, style=style))
        self._body.update(body)

    def on_click(self, event: events.Click) -> None:
        self.toggle()

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            self.toggle()


class StatusBar(Static):
    """The bottom line: mode, model, context, cost, background tasks. Given as parts, it drops
    them in a fixed order when the terminal is narrow, never the mode (``labels.fit_status``)."""

    def __init__(self) -> None:
        super().__init__("", markup=False, id="status")
        self._parts: list[tuple[str, str]] = []

    def show(self, text: str) -> None:
        self.show_parts([("mode", text)])

    def show_parts(self, parts: list[tuple[str, str]]) -> None:
        self._parts = parts
        self._fit()

    def _fit(self) -> None:
        width = self.content_size.width if self.is_attached and self.size.width else None
        self.update(plain_text(fit_status(self._parts, width)))

    def on_resize(self, event: events.Resize) -> None:
        self._fit()
