"""Pure text helpers for the TUI (no Textual import): the status line and tool output."""

from __future__ import annotations

from typing import Any

from agent_cli.slash.text import format_cost, format_tokens, mode_label

__all__ = ["collapse", "retry_text", "status_text"]


def status_text(mode: str, model: str, usage: dict[str, Any], background: int) -> str:
    """The one-line status bar: mode · model · context · cost · background tasks."""
    parts = [f"{mode_label(mode)} (shift+tab to cycle)", model or "no model"]
    parts.append(f"ctx {format_tokens(usage.get('context_tokens'))}")
    parts.append(format_cost(usage.get("cost_usd")))
    if background:
        parts.append(f"{background} background task{'s' if background != 1 else ''}")
    return " · ".join(parts)


def retry_text(event: Any) -> str:
    """The transcript line for a ``RetryEvent``: where, when, which attempt, why."""
    where = f" {event.endpoint}" if event.endpoint else ""
    of = f"/{event.max_attempts}" if event.max_attempts else ""
    return f"Retrying{where} in {event.delay_s:.1f} s (attempt {event.attempt}{of}): {event.reason}"


def collapse(text: str, max_lines: int = 3, width: int = 400) -> tuple[str, int]:
    """The first ``max_lines`` lines (each cut at ``width``) and how many lines were hidden."""
    lines = text.rstrip("\n").splitlines() or [""]
    shown = [ln if len(ln) <= width else ln[:width] + "…" for ln in lines[:max_lines]]
    return "\n".join(shown), max(0, len(lines) - max_lines)
