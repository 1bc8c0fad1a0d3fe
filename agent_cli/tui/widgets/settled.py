"""The finished parts of a long streamed answer, as ONE widget of pre-rendered lines.

A long answer streams in parts (``tui/stream_split.py``). Each finished part used to settle in
place into its own Rich Markdown widget: 10,000 streamed lines left ~65 of them, each rendered
once to measure its height and again to paint, in the same frame as the keystroke the user
was typing, and every layout pass walked them all (``bench/keystroke.py``).

Here the finished parts of one answer go into one ``SettledParts`` above the part still
streaming. A part is rendered once, as a stored message is (Rich Markdown), in a thread, at the
widget's width, and its lines are appended: the widget's height is its line count and painting
a line is a list lookup, so what the layout does for the finished parts stays the same however
long the answer grows. A new width (a resize) renders the parts again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.markdown import Markdown as RichMarkdown
from textual.geometry import Size
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual, visualize
from textual.widget import Widget

if TYPE_CHECKING:
    from agent_cli.tui.widgets.conversation import Conversation
    from agent_cli.tui.widgets.markdown import AssistantMessage

__all__ = ["PartRetirer", "SettledParts"]


class SettledParts(Widget):
    """The finished parts of one streamed answer, their rendered lines kept (module docstring)."""

    # no margin of its own in the conversation (tui/styles.py): the parts follow each other as
    # the text did, a paragraph break between two of them a blank line (``_gap``)
    DEFAULT_CSS = "SettledParts { height: auto; }"

    def __init__(self) -> None:
        super().__init__(classes="assistant")
        self.parts: list[str] = []  # each part's source, in order
        self._separators: list[str] = []  # what the cut after each part took out
        self._lines: list[Strip] = []
        self._width = 0  # the width ``_lines`` were rendered at (0: none yet)
        self.rendered_parts = 0  # parts rendered so far, all widths (tests count them)

    @property
    def source(self) -> str:
        """The parts' text as streamed (the separators between them put back)."""
        between = zip(self.parts[:-1], self._separators[:-1], strict=True)
        return "".join(part + sep for part, sep in between) + "".join(self.parts[-1:])

    def render_part(self, text: str, width: int, style: Style) -> list[Strip]:
        """``text`` rendered as a stored message is, at ``width``; safe to call in a thread."""
        visual = visualize(self, RichMarkdown(text), markup=False)
        self.rendered_parts += 1
        return Visual.to_strips(self, visual, width, None, style)

    def add(self, text: str, separator: str, lines: list[Strip], width: int) -> None:
        """Append a part, the separator its cut took out after it, and its ``lines`` rendered
        at ``width`` by :meth:`render_part`."""
        self._separators.append(separator)
        self.parts.append(text)
        if not self._lines and not self._width:
            self._width = width
        if width == self._width:
            self._lines.extend(lines)
            self._lines.extend(self._gap(separator, width))
        else:  # rendered for another width: all parts are rendered again at the next layout
            self._width = -1
        self.refresh(layout=True)

    def _gap(self, separator: str, width: int) -> list[Strip]:
        """A paragraph break cut out between two parts is a blank line, as within a part."""
        if separator != "\n\n":
            return []
        return [Strip.blank(width, self.visual_style.rich_style)]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._ensure(width)
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._ensure(width)
        if 0 <= y < len(self._lines):
            return self._lines[y]
        return Strip.blank(width, self.visual_style.rich_style)

    def _ensure(self, width: int) -> None:
        if width == self._width or width <= 0:
            return
        style = self.visual_style
        lines: list[Strip] = []
        for part, separator in zip(self.parts, self._separators, strict=True):
            lines += self.render_part(part, width, style)
            lines += self._gap(separator, width)
        self._lines = lines
        self._width = width


class PartRetirer:
    """Moves the finished parts of the answer streaming now, in order, into one
    ``SettledParts`` mounted above the first of them. One per answer (a run of text)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.target: SettledParts | None = None
        self._last: asyncio.Task[None] | None = None

    def retire(self, part: AssistantMessage, separator: str) -> asyncio.Task[None]:
        """Start moving ``part`` (its last delta already fed) once those before it moved."""
        task = asyncio.create_task(self._retire(part, separator, self._last))
        self._last = task
        return task

    async def wait(self) -> None:
        """Return once every part handed to :meth:`retire` has moved."""
        if self._last is not None:
            await asyncio.gather(self._last, return_exceptions=True)

    async def _retire(
        self, part: AssistantMessage, separator: str, previous: asyncio.Task[None] | None
    ) -> None:
        await part.finish(settle=False)  # its queued deltas rendered
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        if not part.is_attached:  # the conversation was cleared meanwhile
            return
        target = self.target
        if target is None or not target.is_attached:
            target = self.target = SettledParts()
            await self.conversation.mount(target, before=part)
        width = part.size.width
        text = part.source
        if width > 0:
            # Rendered off the event loop: the keyboard's echo does not wait behind it.
            style = target.visual_style
            lines = await asyncio.to_thread(target.render_part, text, width, style)
        else:
            lines = []  # not laid out (yet): the next layout renders it
        await part.key_quiet()  # the echo of a key just typed goes first (markdown.key_defer)
        if not part.is_attached:
            return
        target.add(text, separator, lines, width)
        part.display = False  # gone in the same frame as its lines appear above
        await part.remove()
