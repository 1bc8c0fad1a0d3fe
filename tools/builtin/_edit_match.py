"""Finding ``old_string`` in a file: exactly first, then forgiving quotes and trailing blanks.

Models often type straight quotes where the file has typographic ones (‘ ’ “ ”), or drop the
trailing spaces of a line. When the exact string is absent, both sides are normalised (curly ->
straight quotes; spaces, tabs and CR before a newline dropped) and the match is located in the
normalised text, then mapped back to the span of the file's *actual* text, which is what gets
replaced. So an edit never rewrites text outside what the model meant.

When the actual text used curly quotes, ``new_string``'s straight quotes are given the same
style (:func:`apply_curly_quotes`): an opening quote after a space, bracket or dash or at the
start; an apostrophe between letters; a closing quote otherwise.
"""

from __future__ import annotations

import bisect
from typing import Literal

from tools.records import datarecord

__all__ = ["Match", "apply_curly_quotes", "find_matches", "normalize_quotes"]

_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})
_TRAILING = " \t\r"
_OPENERS = "([{<—–-"


def normalize_quotes(text: str) -> str:
    """Curly quotes to straight ones (same length, so indices are kept)."""
    return text.translate(_QUOTES)


@datarecord(frozen=True, slots=True)
class Match:
    """Where ``old_string`` is in the file: non-overlapping spans of the actual text."""

    spans: tuple[tuple[int, int], ...]
    how: Literal["exact", "fuzzy"]


class _Normalised:
    """The file's text with quotes straightened and trailing blanks dropped, mapped back."""

    def __init__(self, text: str) -> None:
        parts: list[str] = []
        self._norm_starts: list[int] = []
        self._orig_starts: list[int] = []
        self._kept: list[int] = []
        self._newline_at: list[int] = []  # original index of the line's "\n", -1 at the end
        norm_pos = orig_pos = 0
        for line in normalize_quotes(text).split("\n"):
            kept = line.rstrip(_TRAILING)
            self._norm_starts.append(norm_pos)
            self._orig_starts.append(orig_pos)
            self._kept.append(len(kept))
            nl = orig_pos + len(line)
            self._newline_at.append(nl if nl < len(text) else -1)
            parts.append(kept)
            norm_pos += len(kept) + 1
            orig_pos = nl + 1
        self.text = "\n".join(parts)

    def to_original(self, index: int) -> int:
        line = bisect.bisect_right(self._norm_starts, index) - 1
        offset = index - self._norm_starts[line]
        if offset < self._kept[line]:
            return self._orig_starts[line] + offset
        return self._newline_at[line]

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.to_original(start), self.to_original(end - 1) + 1


def _find_all(haystack: str, needle: str) -> list[int]:
    found: list[int] = []
    pos = haystack.find(needle)
    while pos >= 0:
        found.append(pos)
        pos = haystack.find(needle, pos + len(needle))
    return found


def find_matches(text: str, old: str) -> Match | None:
    """All non-overlapping places of ``old`` in ``text``: exact if any, else fuzzy, else None."""
    if not old:
        return None
    exact = _find_all(text, old)
    if exact:
        return Match(tuple((p, p + len(old)) for p in exact), "exact")
    norm = _Normalised(text)
    lines = normalize_quotes(old).split("\n")
    candidate = "\n".join([ln.rstrip(_TRAILING) for ln in lines[:-1]] + [lines[-1]])
    for needle in dict.fromkeys((candidate, candidate.rstrip(" \t"))):
        if not needle:
            continue
        found = _find_all(norm.text, needle)
        if found:
            return Match(tuple(norm.span(p, p + len(needle)) for p in found), "fuzzy")
    return None


def apply_curly_quotes(new: str, actual: str) -> str:
    """Give ``new`` the quote style of ``actual`` (the file text that was matched)."""
    doubles = "“" in actual or "”" in actual
    singles = "‘" in actual or "’" in actual
    if not (doubles or singles):
        return new
    out: list[str] = []
    for i, ch in enumerate(new):
        prev = new[i - 1] if i else ""
        opening = not prev or prev.isspace() or prev in _OPENERS
        if ch == '"' and doubles:
            out.append("“" if opening else "”")
        elif ch == "'" and singles:
            nxt = new[i + 1] if i + 1 < len(new) else ""
            if prev.isalnum() and nxt.isalpha():
                out.append("’")
            else:
                out.append("‘" if opening else "’")
        else:
            out.append(ch)
    return "".join(out)
