"""The scrolling conversation, with lazy mounting of old messages.

A resumed 2,000-message conversation is kept as plain data; only the newest ``WINDOW`` entries
become widgets. Scrolling to the top mounts the previous ``WINDOW`` above, keeping the view
where it was, so opening a long session costs the same as opening a short one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.widget import Widget

from agent_cli.session.attachment_text import attachment_line
from agent_cli.slash.views import content_text
from agent_cli.transcripts.commands import typed_command
from agent_cli.tui.widgets.items import NoticeLine, ToolCall, UserMessage
from agent_cli.tui.widgets.paste import stored_prompt_view
from agent_cli.tui.widgets.thinking import ThinkingLine
from tools.records import datarecord

if TYPE_CHECKING:
    from agent_cli.tui.stored_calls import StoredCalls

__all__ = ["WINDOW", "Conversation", "Entry", "entries_from_messages", "stored_entries"]

WINDOW = 50


@datarecord(frozen=True, slots=True)
class Entry:
    """One displayable item of a stored conversation."""

    kind: str  # user | assistant | tool | notice | thinking | redacted_thinking
    text: str
    header: str = ""
    tool_use_id: str = ""
    is_error: bool = False
    expanded: bool = False  # a tool result shown whole (a todo checklist)
    detail: str | None = None  # what the full transcript (Ctrl+O) shows instead of ``text``


def entries_from_messages(
    messages: Sequence[Mapping[str, Any]], calls: StoredCalls | None = None
) -> list[Entry]:
    """API-shaped messages (``role`` + string or block ``content``) as display entries; tool
    calls as ``calls`` shows them (``tui.stored_calls``: as they were shown live).

    Unknown shapes are skipped, never fatal: transcripts from other versions must open.
    """
    from agent_cli.tui.stored_calls import StoredCalls

    built = _EntryList(calls if calls is not None else StoredCalls())
    for msg in messages:
        if isinstance(msg, dict):
            built.add_message(msg)
    return built.entries


class _EntryList:
    """The entries of a stored conversation, built message by message: a tool call's entry is
    replaced by its result's."""

    def __init__(self, calls: StoredCalls) -> None:
        self.calls = calls
        self.entries: list[Entry] = []
        self._call_at: dict[str, int] = {}  # tool_use id -> index of the call's entry
        self._called: dict[str, tuple[str, Any]] = {}  # tool_use id -> (name, input)

    def add_message(self, msg: Mapping[str, Any]) -> None:
        role = msg.get("role") or msg.get("type")
        content = msg.get("content")
        if content is None and isinstance(msg.get("message"), dict):
            content = msg["message"].get("content")
        if isinstance(content, str):
            if content.strip():
                self.entries.append(Entry("user" if role == "user" else "assistant", content))
        elif isinstance(content, list):
            self._add_blocks(role == "user", content)

    def _add_blocks(self, user: bool, blocks: list[Any]) -> None:
        typed: str | None = None  # a custom command as typed: its expanded body is not shown
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and str(block.get("text", "")).strip():
                typed = self._add_text(user, block["text"], typed)
            elif kind in ("thinking", "redacted_thinking"):
                self.entries.append(Entry(kind, str(block.get("thinking") or "")))
            elif kind == "tool_use":
                self._add_call(block)
            elif kind == "tool_result":
                self._add_result(block)

    def _add_text(self, user: bool, text: str, typed: str | None) -> str | None:
        """Add a text block; returns the message's command as typed, once there is one."""
        shown = attachment_line(text) if user else None
        if shown is not None:  # what an @path mention attached: one line, not the file
            if shown:
                self.entries.append(Entry("notice", shown))
            return typed
        if typed is not None:
            return typed  # a custom command's expanded body: shown as the command typed
        typed = typed_command(text) if user else None
        self.entries.append(Entry("user" if user else "assistant", typed or text))
        return typed

    def _add_call(self, block: dict[str, Any]) -> None:
        tid = str(block.get("id", ""))
        self._call_at[tid] = len(self.entries)
        name = str(block.get("name", "?"))
        self._called[tid] = (name, block.get("input"))
        header = self.calls.header(name, block.get("input"))
        self.entries.append(Entry("tool", "", header=header, tool_use_id=tid))

    def _add_result(self, block: dict[str, Any]) -> None:
        tid = str(block.get("tool_use_id", ""))
        err = bool(block.get("is_error"))
        name, tool_input = self._called.get(tid, ("Tool", None))
        view = self.calls.result(tid, name, tool_input, block.get("content"), err)
        detail = content_text(view.detail) if view.detail is not None else None
        at = self._call_at.get(tid)
        header = self.entries[at].header if at is not None else "Tool"
        entry = Entry("tool", content_text(view.text), header, tid, err, view.expanded, detail)
        if at is not None:
            self.entries[at] = entry
        else:
            self.entries.append(entry)


def stored_entries(app: Any, messages: Sequence[Mapping[str, Any]]) -> list[Entry]:
    """``messages`` as ``app`` shows them: its session's headers and stored outputs, and the
    outputs of the calls it showed live (``tui.stored_calls``)."""
    from agent_cli.tui.stored_calls import stored_calls_of

    return entries_from_messages(messages, stored_calls_of(app))


def _widget_for(entry: Entry) -> Widget:
    if entry.kind == "user":
        return UserMessage(stored_prompt_view(entry.text))
    if entry.kind == "assistant":
        from agent_cli.tui.widgets.markdown import MarkdownText

        return MarkdownText(entry.text)
    if entry.kind == "tool":
        w = ToolCall(entry.tool_use_id, entry.header)
        w.finish(entry.text, entry.is_error, expanded=entry.expanded, detail=entry.detail)
        return w
    if entry.kind in ("thinking", "redacted_thinking"):
        return ThinkingLine(entry.text, redacted=entry.kind == "redacted_thinking")
    return NoticeLine(entry.text, "info")


class Conversation(VerticalScroll, can_focus=False):
    """The message log. Live widgets are appended with ``add``; stored ones are ``load``-ed."""

    def __init__(self) -> None:
        super().__init__(id="conversation")
        self._older: list[Entry] = []  # not yet mounted, oldest first

    @property
    def unmounted(self) -> int:
        """How many stored entries are still waiting above the view."""
        return len(self._older)

    def on_mount(self) -> None:
        # Anchored: new content keeps the view at the bottom until the user scrolls up.
        self.anchor()

    async def add(self, widget: Widget) -> None:
        """Append a live widget."""
        await self.mount(widget)

    async def load(self, entries: list[Entry]) -> None:
        """Replace the log with a stored conversation; mount only the newest window."""
        await self.remove_children()
        self._older = list(entries[:-WINDOW]) if len(entries) > WINDOW else []
        newest = entries[-WINDOW:]
        if self._older:
            await self.mount(NoticeLine(f"↑ {len(self._older)} earlier messages", "info"))
        if newest:
            await self.mount_all([_widget_for(e) for e in newest])
        self.scroll_end(animate=False, immediate=False)

    async def clear_log(self) -> None:
        self._older = []
        await self.remove_children()

    async def mount_older(self) -> int:
        """Mount the previous window above the current first message; returns how many."""
        if not self._older:
            return 0
        batch, self._older = self._older[-WINDOW:], self._older[:-WINDOW]
        first = self.children[0] if self.children else None
        anchor = first
        if isinstance(first, NoticeLine) and first.notice_text.startswith("↑ "):
            anchor = self.children[1] if len(self.children) > 1 else None
            await first.remove()
        widgets = [_widget_for(e) for e in batch]
        if self._older:
            widgets.insert(0, NoticeLine(f"↑ {len(self._older)} earlier messages", "info"))
        if anchor is not None:
            await self.mount_all(widgets, before=anchor)
            self.call_after_refresh(self.scroll_to_widget, anchor, animate=False, top=True)
        else:
            await self.mount_all(widgets)
        return len(batch)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 and old > 0 and self._older:
            self.run_worker(self.mount_older(), exclusive=True, group="older")
