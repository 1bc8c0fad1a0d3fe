"""Big pastes as ``[Pasted text #N +M lines]``: the input and the conversation show the
placeholder, the model gets the text whole (issue 21: "a 10,000-line paste fills the input and
is echoed whole into the transcript").

A paste of more than ``MAX_LINES`` lines or ``MAX_CHARS`` characters is kept here and the
input gets its placeholder (Claude Code's wording: ``+M`` counts the line breaks, and a long
single line has no count). What is sent is :meth:`PastedTexts.expand` of what the input says:
each placeholder still there becomes its text, a deleted one is simply gone, one typed by hand
for a paste that never happened stays as typed. The texts live as long as the app, so a prompt
recalled from history (Up) or queued while a turn runs expands the same way.

The transcript keeps what the model got (the whole text). A resumed conversation cannot tell a
paste from typing, so a stored prompt as big as a paste shows its head and "… +N lines"
(:func:`stored_prompt_view`), never thousands of lines.
"""

from __future__ import annotations

import re
from dataclasses import field

from tools.records import datarecord

__all__ = [
    "MAX_CHARS",
    "MAX_LINES",
    "PastedTexts",
    "is_big_paste",
    "pasted_text",
    "placeholder_for",
    "stored_prompt_view",
]

MAX_LINES = 10  # a paste with more lines than this is shown as a placeholder
MAX_CHARS = 1000  # ... and so is one longer than this

_PLACEHOLDER = re.compile(r"\[Pasted text #(\d+)(?: \+\d+ lines)?\]")


def pasted_text(raw: str) -> str:
    """A paste's text with the terminal's line breaks as ``\\n``: terminals (and tmux's
    ``paste-buffer``) send a pasted line break as CR."""
    return raw.replace("\r\n", "\n").replace("\r", "\n") if "\r" in raw else raw


def is_big_paste(text: str) -> bool:
    """A paste the input shows as a placeholder rather than whole."""
    return len(text) > MAX_CHARS or text.count("\n") + 1 > MAX_LINES


def placeholder_for(number: int, text: str) -> str:
    breaks = text.count("\n")
    return f"[Pasted text #{number} +{breaks} lines]" if breaks else f"[Pasted text #{number}]"


def stored_prompt_view(text: str) -> str:
    """A stored prompt as a resumed conversation shows it: whole, or its head when big."""
    if not is_big_paste(text):
        return text
    lines = text.removesuffix("\n").split("\n")
    head = "\n".join(lines[:MAX_LINES])[:MAX_CHARS]
    rest = len(lines) - head.count("\n") - 1
    return f"{head}\n… +{rest} lines" if rest else f"{head} …"


@datarecord
class PastedTexts:
    """The app's big pastes, by placeholder number."""

    texts: dict[int, str] = field(default_factory=dict)
    last: int = 0

    def add(self, text: str) -> str:
        """Keep ``text``; return the placeholder the input shows for it."""
        self.last += 1
        self.texts[self.last] = text
        return placeholder_for(self.last, text)

    def expand(self, prompt: str) -> str:
        """``prompt`` with each known placeholder replaced by its pasted text."""
        if "[Pasted text #" not in prompt:
            return prompt

        def whole(match: re.Match[str]) -> str:
            number = int(match.group(1))
            text = self.texts.get(number)
            if text is None or placeholder_for(number, text) != match.group(0):
                return match.group(0)  # not one this app made: as typed
            return text

        return _PLACEHOLDER.sub(whole, prompt)
