"""Where a long streamed answer moves on to a fresh widget.

Textual's ``Markdown.append`` re-parses the document's last block, so a streamed answer that
is one endless block (10,000 lines of output, a huge code block, lines with no blank line
between) costs more with every delta and starves the keyboard. Past ``SPLIT_CHARS`` the answer
continues in a new widget at a paragraph break; past ``LINE_SPLIT_CHARS`` at any line end. Inside
a code fence the old widget gets a closing fence and the new one reopens it with the same
opener (```` ```python ````), so each part renders as code. Fences are followed over whole
lines, since a delta may cut a marker in two.
"""

from __future__ import annotations

from dataclasses import replace

from tools.records import datarecord

__all__ = ["LINE_SPLIT_CHARS", "SPLIT_CHARS", "FenceTracker", "cut_point", "split_point"]

SPLIT_CHARS = 4000  # past this, a paragraph break outside a fence starts a new widget
LINE_SPLIT_CHARS = 8000  # past this, any line end does (a fence is closed and reopened)
_MARKER_CHARS = 256  # of a line, what fence detection keeps (a 10,000-character line stays O(1))


@datarecord
class FenceTracker:
    """Whether the text so far is inside a fenced code block (``opener`` is its first line)."""

    opener: str | None = None
    _line: str = ""

    def feed(self, text: str) -> None:
        if "\n" not in text:  # most deltas: the line grows, up to what a marker can need
            if len(self._line) < _MARKER_CHARS:
                self._line += text
            return
        lines = (self._line + text).split("\n")
        self._line = lines.pop()[:_MARKER_CHARS]
        for line in lines:
            marker = line.strip()
            if self.opener is None:
                if marker.startswith(("```", "~~~")):
                    self.opener = marker
            elif _closes(marker, self.opener):
                self.opener = None

    def open_after(self, text: str) -> bool:
        """Inside a fence once ``text`` is added? (Nothing changes.)"""
        probe = replace(self)
        probe.feed(text)
        return probe.opener is not None


def _run(opener: str) -> str:
    """The fence characters of ``opener`` (```` ```python ```` -> ```` ``` ````)."""
    return opener[: len(opener) - len(opener.lstrip(opener[0]))]


def _closes(marker: str, opener: str) -> bool:
    return len(marker) >= len(_run(opener)) and set(marker) == {opener[0]}


def split_point(fed_chars: int, fence: FenceTracker, text: str) -> tuple[str, str] | None:
    """``(head, tail)``: ``head`` ends the current widget, ``tail`` starts the next; None to
    keep going in the same one. Always advances ``fence`` over ``text``."""
    cut = cut_point(fed_chars, fence, text)
    return None if cut is None else (cut[0], cut[2])


def cut_point(fed_chars: int, fence: FenceTracker, text: str) -> tuple[str, str, str] | None:
    """As :func:`split_point`, with what the cut took out between them: ``(head, separator,
    tail)`` (the separator is ``"\n\n"`` or ``"\n"``)."""
    cut: tuple[int, int] | None = None
    if fed_chars >= SPLIT_CHARS:
        para = text.find("\n\n")
        if para >= 0 and not fence.open_after(text[: para + 2]):
            cut = (para, 2)
        elif fed_chars >= LINE_SPLIT_CHARS and (end := text.find("\n")) >= 0:
            cut = (end, 1)
    if cut is None:
        fence.feed(text)
        return None
    at, width = cut
    head, separator, tail = text[:at], text[at : at + width], text[at + width :]
    fence.feed(text[: at + width])
    opener = fence.opener
    fence.feed(tail)
    if opener is None:
        return head, separator, tail
    return f"{head}\n{_run(opener)}\n", separator, f"{opener}\n{tail}"
