"""Foreign text as Rich ``Text`` for the TUI: control sequences neutralised, never markup.

Every widget that shows text Nerve did not write itself (prompts as stored, model text, tool
calls and results, notices with hook or server messages, file names) builds it here, so nothing
from outside reaches the terminal as a control sequence (``tools.terminal_text``) or is parsed
as Textual markup (a ``Text`` is not). Tool output keeps its SGR colours as styles.
"""

from __future__ import annotations

from rich.text import Text

from tools.terminal_text import neutralize

__all__ = ["ansi_text", "clean", "plain_text"]


def clean(text: str) -> str:
    """``text`` safe to hand to a widget that parses nothing (Markdown source, option labels)."""
    return neutralize(text)


def plain_text(text: str, style: str = "") -> Text:
    """``text`` as a ``Text``, every control sequence removed or shown as a symbol."""
    return Text(neutralize(text), style=style)


def ansi_text(text: str, style: str = "") -> Text:
    """``text`` with its SGR colours as styles and every other control sequence neutralised."""
    safe = neutralize(text, keep_sgr=True)
    if "\x1b" not in safe:
        return Text(safe, style=style)
    out = Text.from_ansi(safe, style=style)
    out.plain = neutralize(out.plain)  # belt and braces: the decoder leaves nothing behind
    return out
