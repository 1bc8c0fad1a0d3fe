"""How many tokens each model can read: the context window auto-compaction measures against.

A small table by model family, matched by id prefix like the price table; an id this table does
not know gets ``DEFAULT_CONTEXT_WINDOW``. Every Claude family Nerve knows reads 200,000 tokens;
the 1M-token beta is named as Claude Code names it, with a ``[1m]`` suffix on the model id.
``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (Claude Code's variable) sets the window outright, for a
gateway model with a smaller one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["CONTEXT_WINDOWS", "DEFAULT_CONTEXT_WINDOW", "WINDOW_ENV", "context_window"]

DEFAULT_CONTEXT_WINDOW = 200_000
LONG_CONTEXT_WINDOW = 1_000_000
WINDOW_ENV = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"

# Keys are id prefixes; the longest matching prefix wins (dated ids like -20250929 match).
CONTEXT_WINDOWS: dict[str, int] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5": 200_000,
    "claude-3": 200_000,
}


def context_window(model: str, env: Mapping[str, str] | None = None) -> int:
    """The window of ``model`` in tokens (see the module docstring for the order)."""
    env = os.environ if env is None else env
    override = env.get(WINDOW_ENV, "").strip()
    if override.isdigit() and int(override) > 0:
        return int(override)
    name = model.strip().lower()
    if name.endswith("[1m]"):
        return LONG_CONTEXT_WINDOW
    matches = [p for p in CONTEXT_WINDOWS if name.startswith(p)]
    return CONTEXT_WINDOWS[max(matches, key=len)] if matches else DEFAULT_CONTEXT_WINDOW
