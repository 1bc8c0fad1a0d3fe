"""Substitutions bash could run from text tree-sitter left as a plain token.

tree-sitter-bash models most of a word, but keeps some parts as opaque tokens: the operand of
``${x#...}``/``${x%...}``/``${x^^...}`` is one ``regex`` token, a backquote inside a heredoc
or a ``${a:-...}`` is plain text, a single-quoted operand inside a double-quoted ``${...}``
is a ``raw_string`` although bash reads the quotes there literally. Bash still runs every
``$(...)``, backquote, ``<(...)``/``>(...)`` and arithmetic ``$((...))``/``$[...]`` in them.

:func:`find_substitutions` finds them in such a token, erring on the side of finding too
many: quotes are looked through (a quote that bash honours only hides a substitution the
analysis then asks about needlessly), a backslash escapes the next character (which it does
wherever a ``$`` or a backquote could start a substitution). What a found body runs is parsed
as a script of its own by the caller, so deny rules and the read-only analysis see it.
"""

from __future__ import annotations

from typing import NamedTuple

from permissions.bash.words import backtick_bodies

__all__ = [
    "TRIGGERS",
    "Found",
    "every_body",
    "find_substitutions",
    "has_trigger",
    "hidden_expansion",
]

# What can start a substitution: if none of these is in a text, nothing in it runs.
TRIGGERS = ("$(", "`", "<(", ">(", "$[")


class Found(NamedTuple):
    """One substitution: ``kind`` is ``$(``, `````, ``<(``, ``>(`` or ``$[`` (arithmetic);
    ``body`` the script (or, for ``$[``, the expression) between its delimiters."""

    kind: str
    body: str


def has_trigger(text: str) -> bool:
    return any(t in text for t in TRIGGERS)


def hidden_expansion(text: str) -> bool:
    """An unescaped ``${`` in ``text``: a parameter expansion (with its subscripts and
    operands) inside a token tree-sitter did not parse."""
    i = text.find("${")
    while i >= 0:
        slashes = len(text[:i]) - len(text[:i].rstrip("\\"))
        if slashes % 2 == 0:
            return True
        i = text.find("${", i + 2)
    return False


def _skip_quoted(text: str, i: int) -> int:
    """Index after the quoted string that starts at ``text[i]`` (a ``'`` or ``"``)."""
    q, n = text[i], len(text)
    i += 1
    while i < n and text[i] != q:
        i += 2 if q == '"' and text[i] == "\\" else 1
    return i + 1


def _closing(text: str, i: int, opening: str, closing: str) -> int:
    """Index of the ``closing`` that matches the ``opening`` at ``text[i]``, quotes and
    escapes honoured (inside a substitution bash parses a fresh script); ``len(text)`` when
    it is never closed."""
    depth, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "'\"":
            i = _skip_quoted(text, i)
            continue
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def _backquote_end(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] != "`":
        i += 2 if text[i] == "\\" else 1
    return i


def find_substitutions(text: str, *, dquoted: bool = False) -> list[Found]:
    """Every substitution bash might run in ``text`` (a word, an operand, a heredoc line),
    outermost first. ``dquoted``: the text stands inside double quotes, where ``<(`` is
    plain text."""
    out: list[Found] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        nxt = text[i + 1] if i + 1 < n else ""
        if ch == "`":
            end = _backquote_end(text, i + 1)
            out.extend(Found("`", b) for b in backtick_bodies(text[i : end + 1]))
            i = end + 1
        elif ch == "$" and nxt == "(":
            # `$((...))` is arithmetic or a subshell in a substitution: bash decides by
            # trying; as a script `(...)` it runs every command either reading could
            end = _closing(text, i + 1, "(", ")")
            out.append(Found("$(", text[i + 2 : end]))
            i = end + 1
        elif ch == "$" and nxt == "[":
            end = _closing(text, i + 1, "[", "]")
            out.append(Found("$[", text[i + 2 : end]))
            i = end + 1
        elif ch in "<>" and nxt == "(" and not dquoted:
            end = _closing(text, i + 1, "(", ")")
            out.append(Found(ch + "(", text[i + 2 : end]))
            i = end + 1
        else:
            i += 1
    return out


def every_body(text: str, limit: int = 64) -> list[str]:
    """The bodies of every substitution in ``text`` and, looking through quotes again, of
    every substitution inside those (at most ``limit``): what a deny rule is tried against
    when the analysis could not model the command."""
    out: list[str] = []
    pending = find_substitutions(text)
    while pending and len(out) < limit:
        body = pending.pop(0).body
        out.append(body)
        pending.extend(find_substitutions(body))
    return out
