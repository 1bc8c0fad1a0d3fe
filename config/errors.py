"""Settings errors that point at a place: ``file:line:col: field.path: what was expected``.

JSON syntax errors carry the decoder's own line and column. Validation errors carry only a
field path (pydantic's ``loc``), so the text is scanned once more to find where that field's
value starts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

# json's own string scanner (C-accelerated), absent from typeshed
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]

__all__ = [
    "SettingsError",
    "expected_text",
    "format_path",
    "format_validation_error",
    "locate_path",
    "syntax_error_message",
]


class SettingsError(Exception):
    """A settings problem that must stop start-up (a broken policy file, a bad flag value)."""


_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")
_STRING_LISTS = frozenset({"allow", "deny", "ask", "additionalDirectories", "args"})

PathKey = tuple[str | int, ...]


def _scan(text: str, pos: int, path: PathKey, out: dict[PathKey, int]) -> int:
    """Record the offset of every value by path; return the offset after this value."""
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    out.setdefault(path, pos)
    ch = text[pos : pos + 1]
    if ch == "{":
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        if text[pos : pos + 1] == "}":
            return pos + 1
        while True:
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            key, pos = _scanstring(text, pos + 1)
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            pos = _scan(text, pos + 1, (*path, key), out)  # skip ':'
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] == "}":
                return pos + 1
            pos += 1  # ','
    if ch == "[":
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        if text[pos : pos + 1] == "]":
            return pos + 1
        index = 0
        while True:
            pos = _scan(text, pos, (*path, index), out)
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] == "]":
                return pos + 1
            pos += 1
            index += 1
    if ch == '"':
        return _scanstring(text, pos + 1)[1]
    match = _SCALAR.match(text, pos)
    if match is None:
        raise ValueError(f"unexpected character at offset {pos}")
    return match.end()


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def locate_path(text: str, path: Sequence[str | int]) -> tuple[int, int] | None:
    """1-based (line, col) of the value at ``path`` in JSON ``text``, or of its nearest parent.

    Best effort: ``None`` if the text cannot be scanned (it is expected to be valid JSON).
    """
    offsets: dict[PathKey, int] = {}
    try:
        _scan(text, 0, (), offsets)
    except (ValueError, IndexError, RecursionError):
        return None
    key: PathKey = tuple(path)
    while key not in offsets and key:
        key = key[:-1]
    return _line_col(text, offsets[key]) if key in offsets else None


def format_path(loc: Sequence[str | int]) -> str:
    """``("permissions", "allow", 2)`` -> ``permissions.allow[2]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def expected_text(err: dict[str, Any]) -> str:
    """What a pydantic error dict says was expected, in words (``expected a string``)."""
    kind = err.get("type", "")
    loc = err.get("loc", ())
    last = loc[-1] if loc else None
    if kind == "list_type" and last in _STRING_LISTS:
        return "expected a list of strings"
    if kind == "value_error":
        # our own validators: pydantic prefixes "Value error, "
        return str(err.get("msg", "")).removeprefix("Value error, ")
    if kind == "literal_error":
        return f"expected {err.get('ctx', {}).get('expected', 'one of the allowed values')}"
    simple = {
        "string_type": "expected a string",
        "list_type": "expected a list",
        "dict_type": "expected an object",
        "model_type": "expected an object",
        "model_attributes_type": "expected an object",
        "bool_type": "expected true or false",
        "int_type": "expected an integer",
        "float_type": "expected a number",
        "missing": "required field is missing",
        "greater_than": "expected a positive number",
        "greater_than_equal": "expected a number >= 0",
    }
    return simple.get(kind, str(err.get("msg", "invalid value")))


def format_validation_error(shown: str, text: str, exc: ValidationError) -> list[str]:
    """One ``file:line:col: field: expected ...`` line per distinct field error."""
    lines: list[str] = []
    seen: set[tuple[str | int, ...]] = set()
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        if loc in seen:
            continue  # one line per field is enough
        seen.add(loc)
        where = locate_path(text, loc)
        place = f"{shown}:{where[0]}:{where[1]}" if where else shown
        lines.append(f"{place}: {format_path(loc)}: {expected_text(dict(err))}")
    return lines


def syntax_error_message(shown: str, exc: json.JSONDecodeError) -> str:
    """``file:line:col: invalid JSON: <decoder message>``."""
    return f"{shown}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"
