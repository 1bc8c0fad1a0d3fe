"""What a broken settings file still restricts: its deny and ask rules, recovered if possible.

A file Nerve cannot use is skipped, but skipping must never lift a restriction its author wrote
(defaults fail closed). So from a broken file Nerve keeps ``permissions.deny`` and
``permissions.ask``, recovered in this order:

1. from the parsed JSON when the file is valid JSON with a wrong type somewhere
   (``"deny": "Bash(rm *)"`` counts as a one-rule list);
2. from a lenient re-parse when it is not valid JSON: comments (``//``, ``/* */``), trailing
   commas, NUL characters and undecodable bytes (as U+FFFD) are tolerated;
3. from the ``"deny"`` / ``"ask"`` values found by scanning the text when even that fails.

A recovery is *complete* when nothing suggests a lost rule. When it is not (a rule list that
cannot be decoded, a rule value of an unexpected shape, a rule with an undecodable character,
an unreadable file), the layer gets one more ask rule, ``*``: every tool call it could have
restricted asks instead of running, and the warning says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["ASK_EVERYTHING", "Recovery", "recover_from_data", "recover_from_text"]

ASK_EVERYTHING: Final[str] = "*"
_RESTRICTIVE: Final[tuple[str, ...]] = ("deny", "ask")
_KEY = re.compile(r"""["']?\b(deny|ask)\b["']?\s*:""")


@dataclass(frozen=True, slots=True)
class Recovery:
    """The deny/ask rules recovered from a broken file, and whether that is all of them."""

    rules: dict[str, list[str]] = field(default_factory=dict)
    complete: bool = True

    def restrictions(self) -> dict[str, list[str]]:
        """The rules to apply: the recovered ones, plus ``ask: ["*"]`` if incomplete."""
        out = {k: list(v) for k, v in self.rules.items()}
        if not self.complete:
            asks = out.setdefault("ask", [])
            if ASK_EVERYTHING not in asks:
                asks.append(ASK_EVERYTHING)
        return out


def _add(rules: dict[str, list[str]], behavior: str, value: Any) -> bool:
    """Add the rule strings in ``value``; ``False`` if it holds something that may be a rule
    we cannot read (an object or list where a rule string belongs, a U+FFFD)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        return value is None  # ``"deny": null`` says nothing; any other shape may hide rules
    complete = True
    for item in items:
        if isinstance(item, str):
            if "\ufffd" in item:
                complete = False  # the rule as written is unknowable
            if item.strip() and item not in rules.get(behavior, []):
                rules.setdefault(behavior, []).append(item)
        elif isinstance(item, (dict, list)):
            complete = False
    return complete


def recover_from_data(raw: Any) -> Recovery:
    """Recover from parsed JSON (valid, but failing validation)."""
    if not isinstance(raw, dict):
        return Recovery()  # a list or scalar at the top level has no permissions object
    perms = raw.get("permissions")
    if perms is None:
        return Recovery()
    if not isinstance(perms, dict):
        return Recovery(complete=False)
    rules: dict[str, list[str]] = {}
    complete = True
    for behavior in _RESTRICTIVE:
        if behavior in perms:
            complete = _add(rules, behavior, perms[behavior]) and complete
    return Recovery(rules, complete)


def _relax(text: str) -> str:
    """``text`` without comments, trailing commas and NULs, outside of strings."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1].replace("\0", ""))
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch == ",":
            k = i + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k < n and text[k] in "}]":
                i += 1  # a trailing comma
            else:
                out.append(ch)
                i += 1
        elif ch == "\0":
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _scan(text: str) -> Recovery:
    """The values after every ``"deny":`` / ``"ask":`` key that still decode."""
    decoder = json.JSONDecoder()
    rules: dict[str, list[str]] = {}
    complete = True
    for match in _KEY.finditer(text):
        pos = match.end()
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        try:
            value, _ = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            complete = False
            _add(rules, match.group(1), _leading_strings(decoder, text, pos))
            continue
        complete = _add(rules, match.group(1), value) and complete
    return Recovery(rules, complete)


def _leading_strings(decoder: json.JSONDecoder, text: str, pos: int) -> list[str]:
    """The string items at the start of a list that does not decode as a whole."""
    if not text.startswith("[", pos):
        return []
    out: list[str] = []
    pos += 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if not text.startswith('"', pos):
            return out
        try:
            item, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return out
        out.append(item)


def recover_from_text(text: str) -> Recovery:
    """Recover from text that is not valid JSON (already decoded, U+FFFD for bad bytes)."""
    relaxed = _relax(text)
    try:
        raw = json.loads(relaxed)
    except json.JSONDecodeError as exc:
        scanned = _scan(relaxed)
        # Cut short (a partial write) or with undecodable bytes, the text may have held rules
        # no scan can see.
        truncated = exc.pos >= len(relaxed.rstrip())
        doubtful = truncated or "\ufffd" in text
        return Recovery(scanned.rules, scanned.complete and not doubtful)
    except RecursionError:
        return Recovery(complete=False)
    recovery = recover_from_data(raw)
    if recovery.complete and _mangled_key(raw):
        # a byte that did not decode was part of a key: it may have been "permissions" or "deny"
        return Recovery(recovery.rules, complete=False)
    return recovery


def _mangled_key(raw: Any) -> bool:
    if not isinstance(raw, dict):
        return False
    perms = raw.get("permissions")
    keys = [*raw, *(perms if isinstance(perms, dict) else ())]
    return any("\ufffd" in key for key in keys)
