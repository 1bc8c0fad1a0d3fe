"""Shell words: quote removal with full fidelity, ANSI-C decoding, brace expansion.

A word evaluates to a literal string when bash would produce exactly that string without
looking at the environment or the filesystem. Anything else (``$x``, ``$(...)``, an unquoted
glob, a brace expansion, ``~user``) makes the word *unknowable* for allow decisions; for deny
decisions the analysis may still see through it (tracked literal variables, brace expansion).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

__all__ = [
    "SPECIAL_CHARS_RE",
    "Bound",
    "Word",
    "backtick_bodies",
    "brace_expand",
    "decode_ansi_c",
    "eval_word",
    "literal_word",
    "unquote_unquoted",
]

_GLOB_CHARS = frozenset("*?[")
# characters that make an unquoted word more than its own text (escapes, globs, braces, `cmd`)
SPECIAL_CHARS_RE = re.compile(r"[\\*?\[{`]")
_SPECIAL_RE = SPECIAL_CHARS_RE
_HEX4 = re.compile(r"[0-9a-fA-F]{1,4}")
_HEX8 = re.compile(r"[0-9a-fA-F]{1,8}")
_BRACE_RE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_BACKQUOTE_ESCAPE = re.compile(r"\\([\\`$])")
_ESCAPED = re.compile(r"\\.", re.DOTALL)


class Word(NamedTuple):
    """One shell word after quote removal (immutable; a tuple because thousands are built per
    second and a frozen dataclass costs several times more to construct).

    ``value`` is the literal result, or None when it depends on expansions. ``deny_value``
    resolves literal variables assigned earlier in the same script (used only to see through
    obfuscation for deny/ask rules). ``glob``/``brace`` flag unquoted pattern characters.
    """

    text: str
    value: str | None
    deny_value: str | None
    glob: bool = False
    brace: bool = False

    @property
    def known(self) -> bool:
        return self.value is not None and not self.glob and not self.brace

    @property
    def shown(self) -> str:
        """How the word appears in an argv used for matching: its value, else its source."""
        return self.value if self.value is not None else self.text


_new_tuple = tuple.__new__


def literal_word(text: str) -> Word:
    """A word whose value is its text (built without the NamedTuple's Python-level __new__:
    this runs for nearly every word of every command)."""
    return _new_tuple(Word, (text, text, text, False, False))  # type: ignore[no-any-return]


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def decode_ansi_c(body: str) -> str:
    """Decode the inside of ``$'...'`` the way bash does."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        i += 2
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i:])
            if m:
                out.append(chr(int(m.group(), 16)))
                i += m.end()
            else:
                out.append("\\x")
        elif nxt in "uU":
            m = (_HEX4 if nxt == "u" else _HEX8).match(body, i)
            if m:
                out.append(chr(min(int(m.group(), 16), 0x10FFFF)))
                i = m.end()
            else:
                out.append("\\" + nxt)
        elif nxt in "01234567":
            m = re.match(r"[0-7]{0,2}", body[i:])
            digits = nxt + (m.group() if m else "")
            out.append(chr(int(digits, 8) & 0xFF))
            i += len(digits) - 1
        elif nxt == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + nxt)
    return "".join(out)


def unquote_unquoted(text: str) -> tuple[str, bool, bool]:
    """Backslash removal for an unquoted word; returns (value, has_glob, has_brace)."""
    out: list[str] = []
    glob = False
    i, n = 0, len(text)
    plain: list[str] = []  # unescaped characters, to look for brace expansion
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
                plain.append("\0")
            i += 2
            continue
        if ch in _GLOB_CHARS:
            glob = True
        out.append(ch)
        plain.append(ch)
        i += 1
    brace = "{" in text and bool(_BRACE_RE.search("".join(plain)))
    return "".join(out), glob, brace


def backtick_bodies(text: str) -> list[str]:
    """The scripts between unescaped backquote pairs in ``text``, unescaped as bash does
    inside backquotes (a backslash before a backquote, a backslash or a dollar is dropped)."""
    out: list[str] = []
    i, n = 0, len(text)
    start = -1
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`":
            if start < 0:
                start = i + 1
            else:
                out.append(_BACKQUOTE_ESCAPE.sub(r"\1", text[start:i]))
                start = -1
        i += 1
    if start >= 0:
        out.append(_BACKQUOTE_ESCAPE.sub(r"\1", text[start:]))  # unterminated: bash still runs it
    return out


def _has_backquote(text: str) -> bool:
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return True
        i += 1
    return False


def _unescape_dquoted(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _var_name_of(node: Any) -> str | None:
    """``$x`` or ``${x}`` -> ``x``; anything fancier -> None."""
    kids = node.children
    if node.type == "simple_expansion" and len(kids) == 2 and kids[1].type == "variable_name":
        return str(kids[1].text.decode("utf-8", "replace"))
    if (
        node.type == "expansion"
        and len(kids) == 3
        and kids[1].type == "variable_name"
        and kids[0].type == "${"
    ):
        return str(kids[1].text.decode("utf-8", "replace"))
    return None


class _Acc:
    """Accumulates the literal and deny values of a word; None once unknowable."""

    __slots__ = ("brace", "deny", "glob", "value")

    def __init__(self) -> None:
        self.value: list[str] | None = []
        self.deny: list[str] | None = []
        self.glob = False
        self.brace = False

    def add(self, s: str) -> None:
        if self.value is not None:
            self.value.append(s)
        if self.deny is not None:
            self.deny.append(s)

    def add_unknown(self, deny: str | None) -> None:
        self.value = None
        if self.deny is not None:
            if deny is None:
                self.deny = None
            else:
                self.deny.append(deny)


# What a command substitution prints when that is known statically (``$(echo rm)``): used only
# for deny values, never for allow decisions.
Substitution = Callable[[Any], "str | None"]
# Variables whose value is known for allow decisions too: a ``for`` loop's variable over literal
# words or globs (``permissions.bash.loops``), name -> (value, value is a glob pattern, value
# is the same word unquoted: bash splits and globs an unquoted ``$f`` again).
Bound = Mapping[str, tuple[str, bool, bool]]


def _eval_into(
    node: Any,
    acc: _Acc,
    variables: Mapping[str, str],
    src: bytes,
    sub: Substitution | None,
    bound: Bound,
) -> None:
    t = node.type
    if t == "word" or t == "number":
        _eval_unquoted(node, acc)
    elif t == "raw_string":
        acc.add(node.text.decode("utf-8", "replace")[1:-1])
    elif t == "ansi_c_string":
        acc.add(decode_ansi_c(node.text.decode("utf-8", "replace")[2:-1]))
    elif t in ("string", "translated_string"):
        _eval_dquoted(node, acc, variables, src, sub, bound)
    elif t == "concatenation":
        _eval_concatenation(node, acc, variables, src, sub, bound)
    elif t == "$":
        acc.add("$")
    else:
        _eval_expansion(node, acc, variables, sub, bound, quoted=False)


def _eval_unquoted(node: Any, acc: _Acc) -> None:
    """A ``word`` or ``number``: quote removal, noting globs and braces."""
    text = node.text.decode("utf-8", "replace")
    if "`" in text and _has_backquote(text):
        acc.add_unknown(None)  # a command substitution tree-sitter did not see
        return
    value, glob, brace = unquote_unquoted(text)
    acc.glob |= glob
    acc.brace |= brace
    acc.add(value)


def _eval_dquoted(
    node: Any,
    acc: _Acc,
    variables: Mapping[str, str],
    src: bytes,
    sub: Substitution | None,
    bound: Bound,
) -> None:
    """A double-quoted string: its text between the expansions, and the expansions."""
    pos = node.start_byte + 1
    end = node.end_byte - 1
    for child in node.children:
        if child.type == '"' or child.type == "$":
            pos = max(pos, child.end_byte)
            continue
        if child.start_byte > pos:
            acc.add(_unescape_dquoted(src[pos : child.start_byte].decode("utf-8", "replace")))
        if child.type == "string_content":
            acc.add(_unescape_dquoted(child.text.decode("utf-8", "replace")))
        else:
            _eval_expansion(child, acc, variables, sub, bound, quoted=True)
        pos = child.end_byte
    if end > pos:
        acc.add(_unescape_dquoted(src[pos:end].decode("utf-8", "replace")))


def _eval_concatenation(
    node: Any,
    acc: _Acc,
    variables: Mapping[str, str],
    src: bytes,
    sub: Substitution | None,
    bound: Bound,
) -> None:
    """Parts written next to each other; a brace expansion may span them."""
    plain: list[str] = []
    for child in node.children:
        _eval_into(child, acc, variables, src, sub, bound)
        # tree-sitter splits `{a,b}` into the words `{`, `a,b`, `}`: look across them
        text = child.text.decode("utf-8", "replace") if child.type == "word" else "\0"
        plain.append(_ESCAPED.sub("\0", text) if "\\" in text else text)
    if "{" in plain and _BRACE_RE.search("".join(plain)):
        acc.brace = True


def _eval_expansion(
    node: Any,
    acc: _Acc,
    variables: Mapping[str, str],
    sub: Substitution | None,
    bound: Bound,
    *,
    quoted: bool,
) -> None:
    if node.type == "command_substitution":
        acc.add_unknown(sub(node) if sub is not None else None)
        return
    name = _var_name_of(node)
    if name is not None and name in bound:
        value, glob, same_unquoted = bound[name]
        if quoted or same_unquoted:
            acc.add(value)
            acc.glob |= glob  # "$f" over `src/*.py`: some path that pattern matches
            return
    acc.add_unknown(variables.get(name) if name is not None and name != "IFS" else None)


def eval_word(
    node: Any,
    src: bytes,
    variables: Mapping[str, str] | None = None,
    substitution: Substitution | None = None,
    bound: Bound | None = None,
) -> Word:
    """Evaluate a tree-sitter word-like node (word, string, concatenation, ...).
    ``substitution`` gives the static output of a command substitution (deny values only);
    ``bound`` the variables known for allow decisions too."""
    text = node.text.decode("utf-8", "replace")
    if node.type == "word" and not _SPECIAL_RE.search(text):
        return Word(text, text, text)
    acc = _Acc()
    _eval_into(node, acc, variables or {}, src, substitution, bound or {})
    value = None if acc.value is None else "".join(acc.value)
    deny = None if acc.deny is None else "".join(acc.deny)
    return Word(text, value, deny, acc.glob, acc.brace)


def brace_expand(word: str, limit: int = 64) -> list[str]:
    """Expand ``{a,b}`` alternatives (not ranges) the way bash would, bounded by ``limit``."""
    results = [word]
    for _ in range(8):
        changed = False
        nxt: list[str] = []
        for w in results:
            m = re.search(r"\{([^{}]*,[^{}]*)\}", w)
            if m is None:
                nxt.append(w)
                continue
            changed = True
            for alt in m.group(1).split(","):
                nxt.append(w[: m.start()] + alt + w[m.end() :])
        results = nxt[:limit]
        if not changed:
            break
    return results
