"""The ``env`` object of a settings file, turned into strings the way Claude Code does.

Claude Code copies ``env`` into its process environment, where every value becomes a string:
``1`` is ``"1"``, ``true`` is ``"true"``, ``0.5`` is ``"0.5"``. Setup guides print numeric
flags (``"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": 1``), so a number must not break the file.
A value that has no sensible string form (an object, a list, ``null``), a name the operating
system cannot carry (empty, containing ``=`` or NUL) or a value containing NUL is dropped with
a problem naming the key; the rest of the file is unaffected.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["js_string", "normalize_env"]


def _js_number(value: float) -> str:
    """``String(value)`` in JavaScript, for the floats JSON can carry."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    # Python writes 1e-07 and 1.5e+22; JavaScript writes 1e-7 and 1.5e+22.
    mantissa, exponent = text.split("e")
    sign = "-" if exponent.startswith("-") else "+"
    return f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"


def js_string(value: Any) -> str | None:
    """The string a scalar JSON value becomes in an environment; ``None`` if it has none."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):  # before int: bool is an int in Python
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value)
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def normalize_env(raw: Any) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """``(env, problems)``: the usable variables as strings, and ``(key, what is wrong)`` for
    each variable dropped. ``raw`` that is not an object is one problem with key ``""``."""
    if not isinstance(raw, dict):
        return {}, [("", f"expected an object of variables, got {_kind(raw)}")]
    env: dict[str, str] = {}
    problems: list[tuple[str, str]] = []
    for key, value in raw.items():
        if not key or "=" in key or "\0" in key:
            problems.append((key, "not a valid variable name"))
            continue
        text = js_string(value)
        if text is None:
            problems.append((key, f"expected a string, number or boolean, got {_kind(value)}"))
        elif "\0" in text:
            problems.append((key, "the value contains a NUL character"))
        else:
            env[key] = text
    return env, problems
