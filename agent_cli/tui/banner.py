"""The start-up banner: what went wrong while the session was built (a settings file that does
not parse, an entry that is skipped, a transcript that could not be fully read), shown as soon
as the session is ready instead of after the first prompt."""

from __future__ import annotations

from typing import Any

__all__ = ["BANNER_TITLE", "startup_problems_text"]

BANNER_TITLE = "⚠ Problems found at start-up:"


def startup_problems_text(session: Any) -> str | None:
    """The banner for ``session``'s start-up warnings (taken, so no turn repeats them), or None
    when there are none (or the session cannot say)."""
    take = getattr(session, "take_warnings", None)
    lines = take() if callable(take) else None
    if not lines:
        return None
    shown = [f"  {row}" for line in lines for row in str(line).splitlines()]
    return "\n".join([BANNER_TITLE, *shown])
