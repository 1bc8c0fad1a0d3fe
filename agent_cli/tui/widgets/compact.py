"""A compaction in the conversation: one line that follows its progress to the outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from agent_cli.tui.widgets.items import NoticeLine

if TYPE_CHECKING:
    from agent_cli.loop.events import CompactProgress

__all__ = ["CompactLine", "show_compact_progress"]

_LEVELS = {"failed": "error", "blocked": "warning", "cancelled": "warning"}


class CompactLine(NoticeLine):
    """The line of the running compaction; replaced in place at each step."""

    def set_text(self, text: str, level: str = "info") -> None:
        self.notice_text = text
        self.set_classes(f"notice {level}")
        self.update(Text(text))


async def show_compact_progress(app: Any, event: CompactProgress) -> None:
    """Start, update or finish the compaction line of ``app`` (a ``NerveApp``)."""
    line: CompactLine | None = getattr(app, "_compact_line", None)
    if event.stage == "started" or line is None or not line.is_attached:
        line = CompactLine(event.text)
        app._compact_line = line
        await app.conversation.add(line)
    line.set_text(event.text, _LEVELS.get(event.stage, "info"))
    if event.final:
        app._compact_line = None
