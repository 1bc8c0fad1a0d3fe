"""Print mode's text output: on a terminal, foreign text loses its control sequences.

Model text, tool and hook messages printed to a tty could otherwise set the clipboard or the
title, or clear and rewrite the screen (``tools.terminal_text``). Output to a pipe or a file is
data for a program and is written as it is; ``json`` and ``stream-json`` escape control
characters themselves.
"""

from __future__ import annotations

from typing import TextIO

from tools.terminal_text import neutralize

__all__ = ["for_stream"]


def for_stream(text: str, stream: TextIO) -> str:
    """``text`` as it may be written to ``stream``."""
    isatty = getattr(stream, "isatty", None)
    try:
        on_tty = bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        on_tty = False
    return neutralize(text) if on_tty else text
