"""Text from outside (command output, tool results, MCP servers, hooks, the model) made safe to
show on a terminal.

A terminal obeys control sequences in whatever it prints: OSC 52 writes the clipboard, OSC 0/2
the window title, OSC 8 makes links whose text lies about their target, CSI moves the cursor and
clears the screen (output can hide or rewrite what is above it), DCS and the other string
sequences reach the terminal's own parsers, and a bare ESC, CR or backspace can overwrite what
was printed. ``neutralize`` removes every complete escape sequence and shows every other control
character as a visible symbol (``␛``, ``␇``, ``\\x9b``), keeping only newlines and tabs; with
``keep_sgr`` it keeps SGR colour and emphasis sequences (``ESC [ ... m``, minus "conceal", which
would hide text) so coloured command output can be shown styled.

One function for the TUI and print mode, pure and cheap: text without control characters is
returned as it is.

What is about to *run* (a command in a permission prompt) must not be tidied: the user has to
see the escape sequence, not its effect nor a clean gap where it was. ``reveal`` writes every
character a terminal would not show as itself as an escape (``\\x1b``, ``\\r``, ``\\u202e``):
the C0 and C1 controls but tab and newline, DEL, lone surrogates (``os.fsencode`` turns
``\\udc9b`` into the byte 0x9b, an 8-bit CSI) and the invisible Unicode format characters and
separators (bidi overrides and isolates reorder what is shown, zero-width ones hide).
"""

from __future__ import annotations

import re

__all__ = [
    "StreamNeutralizer",
    "has_controls",
    "has_hidden",
    "hidden_note",
    "json_safe",
    "neutralize",
    "reveal",
]

# Every C0 control but tab and newline, DEL, and the C1 controls (U+0080-U+009F).
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_ANY_CONTROL = re.compile(f"[{_CONTROL}]")
_TOKEN = re.compile(
    r"""
    (?P<csi>(?:\x1b\[|\x9b)(?P<params>[\x30-\x3f]*)(?P<inter>[\x20-\x2f]*)(?P<final>[\x40-\x7e]))
  | (?P<osc>(?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c))
  | (?P<string>(?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c|\x07))
  | (?P<esc>\x1b[\x20-\x2f]*[\x30-\x4f\x51-\x57\x59-\x5a\x5c\x60-\x7e])
  | (?P<crlf>\r\n)
  | (?P<ctrl>[CONTROL])
    """.replace("CONTROL", _CONTROL),
    re.DOTALL | re.VERBOSE,
)
_CONCEAL = 8  # SGR "conceal": text the user cannot see
_INTRODUCER = re.compile("[\x1b\x90\x98\x9b\x9d\x9e\x9f][^\x1b\x90\x98\x9b\x9d\x9e\x9f]*\\Z")
# A string sequence (OSC, DCS, SOS, PM, APC) that has not met its terminator by the end.
_OPEN_STRING = re.compile(
    "(?:\x1b[\\]PX^_]|[\x90\x98\x9d\x9e\x9f])(?:(?!\x07|\x1b\\\\|\x9c).)*\\Z", re.DOTALL
)
_HOLD_MAX = 4096  # a sequence still open after this many characters is shown broken

# What ``reveal`` escapes: C0 but tab and newline, DEL, C1, U+00AD, lone surrogates, and every
# Unicode format character (Cf) and line/paragraph separator (Zl, Zp) as of Unicode 15.1.
# permissions/bash/assess.py's _CONTROL_RE is the same class (the engine imports nothing of
# tools/); a test keeps the two equal.
HIDDEN_CLASS = (
    r"\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    r"\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    r"\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    r"\U000e0001\U000e0020-\U000e007f"
)
_HIDDEN = re.compile(f"[{HIDDEN_CLASS}]")


def has_controls(text: str) -> bool:
    """True when ``text`` holds anything ``neutralize`` would change."""
    return _ANY_CONTROL.search(text) is not None


def has_hidden(text: str) -> bool:
    """True when ``text`` holds a character ``reveal`` would write as an escape."""
    return _HIDDEN.search(text) is not None


def reveal(text: str) -> str:
    """``text`` with every character a terminal would not show as itself written as an escape
    (``\\x1b``, ``\\r``, ``\\x7f``, ``\\u202e``, ``\\U000e0041``); newlines and tabs stay."""
    if _HIDDEN.search(text) is None:
        return text
    return _HIDDEN.sub(_escape, text)


def hidden_note(text: str) -> str | None:
    """What ``reveal`` escaped in ``text``, for a warning ("control characters or escape
    sequences, shown as \\xNN"); None when it holds none."""
    codes = {ord(ch) for ch in _HIDDEN.findall(text)}
    if not codes:
        return None
    parts = []
    if min(codes) <= 0xFF:
        parts.append("control characters or escape sequences, shown as \\xNN")
    if max(codes) > 0xFF:
        parts.append("invisible Unicode characters (bidi, zero-width), shown as \\uNNNN")
    return " and ".join(parts)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code == 0x0D:
        return "\\r"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def json_safe(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with every hidden character written
    as a ``\\u`` escape: the same data for a parser, nothing for a terminal to obey or hide.

    Such characters stand only inside JSON strings, where a ``\\u`` escape means the same."""
    if _HIDDEN.search(text) is None:
        return text

    def escape(m: re.Match[str]) -> str:
        code = ord(m.group())
        if code <= 0xFFFF:
            return f"\\u{code:04x}"
        code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters past the BMP
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

    return _HIDDEN.sub(escape, text)


def neutralize(text: str, *, keep_sgr: bool = False) -> str:
    """``text`` with no control sequence left but newlines, tabs and (``keep_sgr``) SGR."""
    if not _ANY_CONTROL.search(text):
        return text

    def replace(m: re.Match[str]) -> str:
        kind = m.lastgroup
        if kind == "csi":
            if keep_sgr and m["final"] == "m" and not m["inter"]:
                return _safe_sgr(m["params"])
            return ""
        if kind in ("osc", "string", "esc"):
            return ""
        if kind == "crlf":
            return "\n"
        return _visible(m.group())

    return _TOKEN.sub(replace, text)


def _visible(ch: str) -> str:
    code = ord(ch)
    if ch == "\r":
        return "\n"  # a bare carriage return would let a line overwrite itself
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ... ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"  # C1: no picture for these


def _safe_sgr(params: str) -> str:
    """An SGR sequence with only colour and emphasis: private forms and conceal are dropped."""
    if params and not all(c.isdigit() or c in ";:" for c in params):
        return ""
    if ":" in params:  # sub-parameters (curly underlines...): not worth the risk
        return ""
    codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    kept: list[str] = []
    i = 0
    while i < len(codes):
        code = codes[i]
        if code in (38, 48, 58) and i + 1 < len(codes):
            width = {5: 3, 2: 5}.get(codes[i + 1], 1)  # 38;5;n or 38;2;r;g;b
            kept.extend(str(c) for c in codes[i : i + width])
            i += width
            continue
        if code != _CONCEAL:
            kept.append(str(code))
        i += 1
    return f"\x1b[{';'.join(kept)}m" if kept else ""


class StreamNeutralizer:
    """``neutralize`` for text that arrives in pieces (a streamed answer).

    A sequence split across two pieces would otherwise show as debris (``2;TITLE␇``): a piece
    that ends inside one is held back until the rest arrives (at most ``_HOLD_MAX``
    characters), so the whole sequence is removed, as it would be from the joined text.
    """

    def __init__(self, *, keep_sgr: bool = False) -> None:
        self.keep_sgr = keep_sgr
        self._held = ""

    def feed(self, piece: str) -> str:
        """What of ``held + piece`` can be shown now."""
        if not self._held and not _ANY_CONTROL.search(piece):
            return piece  # the usual case: plain text
        text = self._held + piece
        self._held = ""
        tail = _open_tail(text)
        if tail and len(tail) < _HOLD_MAX:
            self._held, text = tail, text[: len(text) - len(tail)]
        return neutralize(text, keep_sgr=self.keep_sgr)

    def flush(self) -> str:
        """Whatever was held back, shown as it is (neutralised)."""
        text, self._held = self._held, ""
        return neutralize(text, keep_sgr=self.keep_sgr)


def _open_tail(text: str) -> str:
    """The end of ``text`` from an escape sequence that is not complete yet, or ``""``."""
    if text.endswith("\r"):
        return "\r"  # the "\n" of a CRLF may come next
    m = _OPEN_STRING.search(text)
    if m is not None:
        return text[m.start() :]
    m = _INTRODUCER.search(text)
    if m is None:
        return ""
    whole = _TOKEN.match(text, m.start())
    if whole is not None and whole.lastgroup in ("csi", "osc", "string", "esc"):
        return ""
    return text[m.start() :]
