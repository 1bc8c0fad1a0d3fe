"""Plain-text views for the context commands: the ``/context`` bar and the rewind summary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_cli.slash.text import format_tokens

__all__ = ["BAR_WIDTH", "change_lines", "context_bar", "context_text", "rewind_summary"]

BAR_WIDTH = 50
# One letter per part, in the order ``agent_cli.loop.context_usage`` lists the parts.
_GLYPHS = {
    "System prompt": "S",
    "Memory files": "M",
    "Built-in tools": "T",
    "MCP tools": "P",
    "Deferred tools": "D",
    "Messages": "m",
    "Tool results": "R",
}
_ACTIONS = {
    "restore": "restore",
    "recreate": "recreate",
    "delete": "delete",
    "unrestorable": "cannot restore",
}


def _pct(tokens: int, window: int) -> str:
    return f"{100 * tokens / window:.1f}%" if window else "-"


def context_bar(usage: Any, width: int = BAR_WIDTH) -> str:
    """``[SSTTTmmRRR····BBBB]``: each part's share of the window; B is the compaction buffer."""
    cells: list[str] = []
    for label, tokens in usage.parts:
        n = round(width * tokens / usage.window) if usage.window else 0
        if tokens and n == 0:
            n = 1  # a part that is there is always visible
        cells += [_GLYPHS.get(label, "?")] * n
    buffer = round(width * usage.buffer / usage.window) if usage.window else 0
    cells = cells[: max(0, width - buffer)]
    cells += ["·"] * (width - buffer - len(cells))
    cells += ["B"] * buffer
    return "[" + "".join(cells[:width]) + "]"


def context_text(usage: Any) -> str:
    """The whole ``/context`` answer: the bar, then one line per part with its numbers."""
    total = max(usage.total, usage.used)
    source = "API count + estimate" if usage.measured else "estimate"
    lines = [
        f"Context · {usage.model} · {format_tokens(total)} of {format_tokens(usage.window)} "
        f"tokens ({_pct(total, usage.window)}, {source})",
        context_bar(usage),
    ]
    rows = [(_GLYPHS.get(label, "?"), label, tokens) for label, tokens in usage.parts]
    if usage.buffer:
        rows.append(("B", "Compaction buffer", usage.buffer))
    rows.append(("·", "Free space", usage.free))
    for glyph, label, tokens in rows:
        lines.append(
            f"  {glyph} {label:<18} {format_tokens(tokens):>7}  {_pct(tokens, usage.window):>6}"
        )
    if usage.auto:
        lines.append(
            f"Automatic compaction at {format_tokens(usage.threshold)} tokens "
            f"({_pct(usage.threshold, usage.window)} of the window); /compact to do it now."
        )
    else:
        lines.append("Automatic compaction is off (autoCompact: false); /compact to do it now.")
    return "\n".join(lines)


def change_lines(changes: Sequence[Any]) -> list[str]:
    """One line per file a rewind would change (``FileChange``)."""
    return [f"  {_ACTIONS.get(c.action, c.action):<14} {c.path}  ({c.reason})" for c in changes]


def rewind_summary(preview: Any, *, conversation: bool, files: bool) -> str:
    """What a rewind will do, said before it happens."""
    lines: list[str] = []
    if conversation:
        n = preview.messages_removed
        lines.append(f"Conversation: {n} message{'s' if n != 1 else ''} from this prompt on go.")
    if files:
        changing = [c for c in preview.files if c.action != "unrestorable"]
        if changing:
            lines.append(f"Files: {len(changing)} will change:")
        else:
            lines.append("Files: nothing to restore.")
        lines += change_lines(preview.files)
    return "\n".join(lines)
