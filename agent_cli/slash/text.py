"""Plain-text views of session state that commands print and the status bar shows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "GLYPHS",
    "MODE_LABELS",
    "checklist",
    "format_cost",
    "format_tokens",
    "mode_label",
    "rule_lines",
]

MODE_LABELS: dict[str, str] = {
    "default": "default mode",
    "acceptEdits": "⏵⏵ accept edits on",
    "plan": "⏸ plan mode on",
    "bypassPermissions": "⏵⏵ bypass permissions on",
    "dontAsk": "⏵⏵ don't ask on",
    "auto": "⏵⏵ auto mode on",
}
GLYPHS: dict[str, str] = {"pending": "☐", "in_progress": "◐", "completed": "☑"}


def mode_label(mode: str) -> str:
    """The status-bar text users know for a permission mode."""
    return MODE_LABELS.get(mode, f"{mode} mode")


def format_tokens(n: int | float | None) -> str:
    """``950``, ``12.3k``, ``1.2M``."""
    if not n:
        return "0"
    n = float(n)
    if n < 1000:
        return str(int(n))
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def format_cost(usd: float | None) -> str:
    """Dollars with cents, or four decimals under a cent so tiny costs are not shown as 0."""
    v = float(usd or 0.0)
    return f"${v:.4f}" if 0 < v < 0.01 else f"${v:.2f}"


def rule_lines(rules: Iterable[Any]) -> list[str]:
    """``/permissions`` listing: one line per rule, grouped allow / ask / deny, with sources."""
    order = {"allow": 0, "ask": 1, "deny": 2}
    rows = sorted(rules, key=lambda r: (order.get(r.behavior, 9), r.rule))
    if not rows:
        return ["No permission rules."]
    return [f"{r.behavior:<5}  {r.rule}  ({r.source})" for r in rows]


def checklist(items: Iterable[Mapping[str, Any]]) -> str:
    """One line per item: ☐ pending, ◐ in progress, ☑ completed (unknown status: ☐)."""
    lines = []
    for item in items:
        glyph = GLYPHS.get(str(item.get("status")), GLYPHS["pending"])
        content = " ".join(str(item.get("content", "")).split())  # one line per item
        lines.append(f"{glyph} {content}")
    return "\n".join(lines) if lines else "(no todos)"
