"""A conservative token scan for deny rules when the parser cannot model the command.

tree-sitter gives up on some inputs (``{rm,-f,x}``, unbalanced quotes, ``1<>f``). A deny rule
must still hold, so the raw text is cut at every operator outside quotes, quotes are removed,
brace expansions are expanded, and each piece is offered to the deny matcher. It never allows
anything; it only finds more commands to deny.
"""

from __future__ import annotations

from permissions.bash.words import brace_expand, decode_ansi_c

__all__ = ["scan_segments"]

_BREAKS = frozenset(";&|()`\n\r")


def scan_segments(command: str) -> list[list[str]]:
    """Split ``command`` into argv-like segments (crude but quote-aware)."""
    segments: list[list[str]] = []
    cur: list[str] = []
    word: list[str] = []
    has_word = False
    i, n = 0, len(command)

    def end_word() -> None:
        nonlocal has_word
        if has_word:
            w = "".join(word)
            cur.extend(brace_expand(w) if "{" in w and "," in w else [w])
        word.clear()
        has_word = False

    def end_segment() -> None:
        end_word()
        if cur:
            segments.append(list(cur))
        cur.clear()

    while i < n:
        ch = command[i]
        if ch == "\\" and i + 1 < n:
            if command[i + 1] != "\n":
                word.append(command[i + 1])
                has_word = True
            i += 2
            continue
        if ch == "'":
            j = command.find("'", i + 1)
            j = n if j == -1 else j
            word.append(command[i + 1 : j])
            has_word = True
            i = j + 1
            continue
        if ch == "$" and command.startswith("$'", i):
            j = i + 2
            while j < n and command[j] != "'":
                j += 2 if command[j] == "\\" else 1
            word.append(decode_ansi_c(command[i + 2 : j]))
            has_word = True
            i = j + 1
            continue
        if ch == "$" and command.startswith("$(", i):
            end_segment()
            i += 2
            continue
        if ch == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and command[j] != '"':
                if command[j] == "\\" and j + 1 < n:
                    buf.append(command[j + 1])
                    j += 2
                    continue
                buf.append(command[j])
                j += 1
            word.append("".join(buf))
            has_word = True
            i = j + 1
            continue
        if ch == "#" and not has_word:
            j = command.find("\n", i)
            i = n if j == -1 else j
            continue
        if ch in _BREAKS:
            end_segment()
            i += 1
            continue
        if ch in " \t\xa0<>":
            end_word()
            i += 1
            continue
        if ch in "{}" and not has_word and (i + 1 >= n or command[i + 1] in " \t\n;"):
            end_segment()
            i += 1
            continue
        word.append(ch)
        has_word = True
        i += 1
    end_segment()
    return segments
