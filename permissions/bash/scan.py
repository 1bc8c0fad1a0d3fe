"""A conservative token scan for deny rules when the parser cannot model the command.

tree-sitter gives up on some inputs (``{rm,-f,x}``, unbalanced quotes, ``1<>f``). A deny rule
must still hold, so the raw text is cut at every operator outside quotes, quotes are removed,
brace expansions are expanded, and each piece is offered to the deny matcher. It never allows
anything; it only finds more commands to deny.
"""

from __future__ import annotations

from collections.abc import Callable

from permissions.bash.words import brace_expand, decode_ansi_c

__all__ = ["scan_segments"]

_BREAKS = frozenset(";&|()`\n\r")


def scan_segments(command: str) -> list[list[str]]:
    """Split ``command`` into argv-like segments (crude but quote-aware)."""
    scan = _Scan(command)
    i = 0
    while i < scan.n:
        i = scan.step(i)
    scan.end_segment()
    return scan.segments


class _Scan:
    """The scan's state: the segments so far, the current one, the word being read."""

    __slots__ = ("cur", "has_word", "n", "segments", "text", "word")

    def __init__(self, command: str) -> None:
        self.text = command
        self.n = len(command)
        self.segments: list[list[str]] = []
        self.cur: list[str] = []
        self.word: list[str] = []
        self.has_word = False

    def add(self, piece: str) -> None:
        self.word.append(piece)
        self.has_word = True

    def end_word(self) -> None:
        if self.has_word:
            w = "".join(self.word)
            self.cur.extend(brace_expand(w) if "{" in w and "," in w else [w])
        self.word.clear()
        self.has_word = False

    def end_segment(self) -> None:
        self.end_word()
        if self.cur:
            self.segments.append(list(self.cur))
        self.cur.clear()

    def step(self, i: int) -> int:
        """Take the character at ``i`` (and what it opens); the index after it."""
        ch = self.text[i]
        quoting = _QUOTING.get(ch)
        if quoting is not None:
            nxt = quoting(self, i)
            if nxt is not None:
                return nxt
        if ch == "#" and not self.has_word:
            j = self.text.find("\n", i)
            return self.n if j == -1 else j
        if ch in _BREAKS or (
            ch in "{}" and not self.has_word and (i + 1 >= self.n or self.text[i + 1] in " \t\n;")
        ):
            self.end_segment()
        elif ch in " \t\xa0<>":
            self.end_word()
        else:
            self.add(ch)
        return i + 1

    def backslash(self, i: int) -> int | None:
        """``\\x``: x itself (a line continuation: nothing)."""
        if i + 1 >= self.n:
            return None
        if self.text[i + 1] != "\n":
            self.add(self.text[i + 1])
        return i + 2

    def single_quoted(self, i: int) -> int:
        j = self.text.find("'", i + 1)
        j = self.n if j == -1 else j
        self.add(self.text[i + 1 : j])
        return j + 1

    def dollar(self, i: int) -> int | None:
        """``$'...'`` (decoded) and ``$(`` (a new segment); None for any other ``$``."""
        text, n = self.text, self.n
        if text.startswith("$'", i):
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            self.add(decode_ansi_c(text[i + 2 : j]))
            return j + 1
        if text.startswith("$(", i):
            self.end_segment()
            return i + 2
        return None

    def double_quoted(self, i: int) -> int:
        text, n = self.text, self.n
        j = i + 1
        buf: list[str] = []
        while j < n and text[j] != '"':
            if text[j] == "\\" and j + 1 < n:
                buf.append(text[j + 1])
                j += 2
                continue
            buf.append(text[j])
            j += 1
        self.add("".join(buf))
        return j + 1


# What a quoting character starts: the index after it, or None when it is a plain character.
_QUOTING: dict[str, Callable[[_Scan, int], int | None]] = {
    "\\": _Scan.backslash,
    "'": _Scan.single_quoted,
    "$": _Scan.dollar,
    '"': _Scan.double_quoted,
}
