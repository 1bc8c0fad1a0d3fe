"""Conversation widgets: user prompts, streamed assistant Markdown, tool calls, notices, status."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static

from agent_cli.tui.labels import collapse, content_text

__all__ = [
    "AssistantMessage",
    "MarkdownText",
    "NoticeLine",
    "StatusBar",
    "StreamStats",
    "ToolCall",
    "UserMessage",
]

PROGRESS_LINES = 4
COLLAPSED_LINES = 3
EXPANDED_MAX_LINES = 2000  # a 1 MB result must not freeze the terminal


class UserMessage(Static):
    """A submitted prompt (shown verbatim: prompts are not markup)."""

    def __init__(self, text: str) -> None:
        super().__init__(Text("> " + text), markup=False, classes="user")
        self.prompt_text = text


class NoticeLine(Static):
    """A one-line notice in the conversation: info, warning, error, retry, interrupted."""

    def __init__(self, text: str, level: str = "info") -> None:
        super().__init__(Text(text), markup=False, classes=f"notice {level}")
        self.notice_text = text


@dataclass
class StreamStats:
    """Deltas handed to assistant widgets and deltas rendered, over the whole app."""

    received: int = 0
    rendered: int = 0

    @property
    def backlog(self) -> int:
        return self.received - self.rendered


class MarkdownText(Static):
    """Finished assistant text as ONE widget (Rich Markdown).

    Textual's Markdown widget mounts a widget per block; thousands of them make every layout
    pass slow. Stored messages and finished stream chunks use this instead.
    """

    def __init__(self, source: str) -> None:
        super().__init__(RichMarkdown(source), classes="assistant")
        self.source = source


class AssistantMessage(Markdown):
    """Assistant text, streamed.

    Deltas are buffered and appended in batches: while one ``Markdown.append`` runs, everything
    that arrives is joined into the next one, so the UI keeps up however fast the model streams
    (the same scheme as ``Markdown.get_stream``, with counters the bench reads for the backlog).
    """

    def __init__(self, text: str = "", stats: StreamStats | None = None) -> None:
        super().__init__(text, classes="assistant")
        self._pending: list[str] = []
        self._wake = asyncio.Event()
        self._stream_task: asyncio.Task[None] | None = None
        self.stats = stats if stats is not None else StreamStats()
        self.received = 0  # deltas handed to feed()
        self.rendered = 0  # deltas whose append has completed
        self.fed_chars = 0
        self.fence_open = False  # inside a ``` block: never split there

    @property
    def backlog(self) -> int:
        """Deltas received but not yet rendered."""
        return self.received - self.rendered

    def feed(self, text: str) -> None:
        """Queue a text delta; cheap, never awaits."""
        if not text:
            return
        self._pending.append(text)
        self.received += 1
        self.stats.received += 1
        self.fed_chars += len(text)
        if text.count("```") % 2:
            self.fence_open = not self.fence_open
        self._wake.set()
        if self._stream_task is None:
            self._stream_task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                if not self._pending:
                    continue
                batch, self._pending = self._pending, []
                await asyncio.shield(self.append("".join(batch)))
                self.rendered += len(batch)
                self.stats.rendered += len(batch)
        except asyncio.CancelledError:
            pass
        if self._pending:
            batch, self._pending = self._pending, []
            await self.append("".join(batch))
            self.rendered += len(batch)
            self.stats.rendered += len(batch)

    async def finish(self) -> None:
        """Render whatever is queued and stop the updater."""
        task, self._stream_task = self._stream_task, None
        if task is not None:
            # Let the updater drain before cancelling it, so the tail is never lost.
            while self.rendered < self.received and not task.done():
                await asyncio.sleep(0.005)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


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
        self._header = Static(Text("● " + header), markup=False, classes="tool-header")
        self._body = Static("", markup=False, classes="tool-body")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._body

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
        self._body.update(Text("\n".join("  " + ln for ln in self._tail), style="dim"))

    def note(self, text: str) -> None:
        """A line under the header before any result (e.g. "Waiting for permission")."""
        if self.result_text is None:
            self._body.update(Text("  ⎿ " + text, style="dim"))

    def finish(self, content: object, is_error: bool, summary: str = "") -> None:
        """Show the result, collapsed."""
        text = content_text(content)
        if not text.strip():
            text = summary or "(no output)"
        self.result_text = text
        self.is_error = is_error
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
        self._body.update(Text(body, style="red" if self.is_error else ""))

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
        self.update(Text(text))
