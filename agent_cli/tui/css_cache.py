"""Textual's parsed stylesheets, kept between runs of ``nerve`` in the start-up code cache
(``agent_cli.boot.code_cache``).

Before its first frame the app parses the CSS of every widget class it shows (Textual's
defaults and ours, 14 texts) with Textual's pure-Python tokenizer: ~12 ms of the first frame
on the development machine, from texts that do not change between runs. :func:`install`
wraps ``Stylesheet._parse_rules`` (which already keeps its results for one process) so a text
parsed by an earlier run is taken from ``code_cache``'s ``"css"`` table: the rule sets,
pickled (~1.8 ms to load all of them).

An entry is used only when everything the parse depends on is the same: the text, where it
was read from, the default/tie-breaker/scope arguments (the key), the theme's CSS variables
the text may refer to, and the installed Textual (the ``stamp``: its ``css/model.py`` size
and modification time; an upgrade rewrites it). Anything else, a parse with errors, or an
entry that does not load, goes through Textual's own parse. The pickles live in the user's
data dir and are trusted as the code cache and ``__pycache__`` are.
"""

from __future__ import annotations

import marshal
import os
import pickle
from typing import Any

from agent_cli.boot import code_cache

__all__ = ["MAX_THEMES", "install", "installed", "stats"]

MAX_THEMES = 4  # variable sets kept (a user switching themes); the oldest goes first

_original: Any = None  # Textual's Stylesheet._parse_rules, while ours is installed
_counts = {"hits": 0, "parsed": 0}  # texts taken from the file / parsed by Textual


def install() -> None:
    """Wrap Textual's parse (after ``code_cache.install``; Textual is imported here)."""
    global _original
    if _original is not None or not code_cache.installed():
        return
    from textual.css import model, stylesheet

    try:
        stat = os.stat(model.__file__)
    except (OSError, TypeError):
        return
    stamp = (stat.st_size, stat.st_mtime_ns)
    _original = stylesheet.Stylesheet._parse_rules

    def _parse_rules(
        self: Any,
        css: str,
        read_from: Any,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> Any:
        key = (css, read_from, is_default_rules, tie_breaker, scope)
        if key in self._parse_cache:  # this process parsed it already
            return _original(self, css, read_from, is_default_rules, tie_breaker, scope)
        entries = _entries(stamp, self._variables)
        rules = _load(entries, key)
        if rules is not None:
            self._parse_cache[key] = rules
            _counts["hits"] += 1
            return rules
        rules = _original(self, css, read_from, is_default_rules, tie_breaker, scope)
        _counts["parsed"] += 1
        if entries is not None and not any(rule.errors for rule in rules):
            try:
                marshal.dumps(key)  # the file is marshal: a key it cannot hold is not kept
                entries[key] = pickle.dumps(rules, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # a value Textual adds that does not pickle: parsed each run
                pass
            else:
                code_cache.note_added()
        return rules

    stylesheet.Stylesheet._parse_rules = _parse_rules  # type: ignore[method-assign]


def installed() -> bool:
    return _original is not None


def stats() -> dict[str, int]:
    """Stylesheet texts this process took from the file (``hits``) and parsed (``parsed``)."""
    return dict(_counts)


def _entries(stamp: tuple[int, int], variables: dict[str, str]) -> dict[Any, Any] | None:
    """The entries made with this Textual and these variables (created empty), or None when
    the variables cannot be a key."""
    try:
        fingerprint = marshal.dumps((stamp, tuple(variables.items())))
    except ValueError:
        return None
    themes = code_cache.table("css")
    entries = themes.get(fingerprint)
    if not isinstance(entries, dict):
        while len(themes) >= MAX_THEMES:
            del themes[next(iter(themes))]
        entries = themes[fingerprint] = {}
    return entries


def _load(entries: dict[Any, Any] | None, key: tuple[Any, ...]) -> list[Any] | None:
    blob = entries.get(key) if entries is not None else None
    if type(blob) is not bytes:
        return None
    try:
        rules = pickle.loads(blob)
    except Exception:  # damaged, or made by a Textual whose classes differ: parsed afresh
        return None
    return rules if isinstance(rules, list) else None
