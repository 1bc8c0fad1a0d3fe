"""Pure text helpers for the TUI (no Textual import): the status line and tool output."""

from __future__ import annotations

from typing import Any, Final

from rich.cells import cell_len, set_cell_size

from agent_cli.slash.text import format_cost, format_tokens, mode_label

__all__ = ["DROP_ORDER", "collapse", "fit_status", "retry_text", "status_parts", "status_text"]

SEPARATOR = " · "
HINT = " (shift+tab to cycle)"
# What a narrow terminal drops first; the mode is never dropped.
DROP_ORDER: Final[tuple[str, ...]] = ("hint", "ctx", "model", "tasks", "cost")


def status_parts(
    mode: str, model: str, usage: dict[str, Any], background: int
) -> list[tuple[str, str]]:
    """The status bar's parts in display order, each ``(name, text)``; the hint follows the
    mode it explains."""
    parts = [("mode", mode_label(mode)), ("hint", HINT), ("model", model or "no model")]
    parts.append(("ctx", f"ctx {format_tokens(usage.get('context_tokens'))}"))
    parts.append(("cost", format_cost(usage.get("cost_usd"))))
    if background:
        parts.append(("tasks", f"{background} background task{'s' if background != 1 else ''}"))
    return parts


def _join(parts: list[tuple[str, str]]) -> str:
    out = ""
    for name, text in parts:
        out += text if name == "hint" or not out else SEPARATOR + text
    return out


def fit_status(parts: list[tuple[str, str]], width: int | None) -> str:
    """The parts joined, dropping them in :data:`DROP_ORDER` until the line fits ``width``
    cells (``None``: no limit); the mode stays, cut with ``…`` only if alone it is too wide."""
    kept = list(parts)
    for name in DROP_ORDER:
        if width is None or cell_len(_join(kept)) <= width:
            break
        kept = [p for p in kept if p[0] != name]
    line = _join(kept)
    if width is not None and cell_len(line) > width:
        line = set_cell_size(line, max(width - 1, 0)) + "…" if width > 0 else ""
    return line


def status_text(mode: str, model: str, usage: dict[str, Any], background: int) -> str:
    """The whole status bar: mode · model · context · cost · background tasks."""
    return fit_status(status_parts(mode, model, usage, background), None)


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
