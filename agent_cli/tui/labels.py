"""Pure text helpers for the TUI (no Textual import): mode labels, numbers, tool output."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = [
    "MODE_LABELS",
    "collapse",
    "content_text",
    "format_cost",
    "format_tokens",
    "mode_label",
    "rule_lines",
    "status_text",
]

MODE_LABELS: dict[str, str] = {
    "default": "default mode",
    "acceptEdits": "⏵⏵ accept edits on",
    "plan": "⏸ plan mode on",
    "bypassPermissions": "⏵⏵ bypass permissions on",
    "dontAsk": "⏵⏵ don't ask on",
    "auto": "⏵⏵ auto mode on",
}


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


def status_text(mode: str, model: str, usage: dict[str, Any], background: int) -> str:
    """The one-line status bar: mode · model · context · cost · background tasks."""
    parts = [f"{mode_label(mode)} (shift+tab to cycle)", model or "no model"]
    parts.append(f"ctx {format_tokens(usage.get('context_tokens'))}")
    parts.append(format_cost(usage.get("cost_usd")))
    if background:
        parts.append(f"{background} background task{'s' if background != 1 else ''}")
    return " · ".join(parts)


def content_text(content: Any) -> str:
    """A tool_result content (string, blocks, anything) as plain text for display."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out: list[str] = []
        for block in content:
            if isinstance(block, dict):
                kind = block.get("type")
                if kind == "text":
                    out.append(str(block.get("text", "")))
                elif kind == "image":
                    out.append("[image]")
                elif kind == "document":
                    out.append("[document]")
                else:
                    out.append(json.dumps(block, default=str)[:200])
            else:
                out.append(str(block))
        return "\n".join(out)
    return str(content)


def collapse(text: str, max_lines: int = 3, width: int = 400) -> tuple[str, int]:
    """The first ``max_lines`` lines (each cut at ``width``) and how many lines were hidden."""
    lines = text.rstrip("\n").splitlines() or [""]
    shown = [ln if len(ln) <= width else ln[:width] + "…" for ln in lines[:max_lines]]
    return "\n".join(shown), max(0, len(lines) - max_lines)


def rule_lines(rules: Iterable[Any]) -> list[str]:
    """``/permissions`` listing: one line per rule, grouped allow / ask / deny, with sources."""
    order = {"allow": 0, "ask": 1, "deny": 2}
    rows = sorted(rules, key=lambda r: (order.get(r.behavior, 9), r.rule))
    if not rows:
        return ["No permission rules."]
    return [f"{r.behavior:<5}  {r.rule}  ({r.source})" for r in rows]
