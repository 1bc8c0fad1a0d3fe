"""``Bash(content)`` rule patterns: exact, legacy ``prefix:*``, word-boundary `` *``, ``*``.

Patterns are compiled once per distinct content (cached) and matched against the normalised
text of one simple command: its argv joined by single spaces.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["CompiledPattern", "compile_pattern", "normalise_content"]

_SHORT_CLUSTER = re.compile(r"-[A-Za-z]+")
# Long spellings of short flags, so `Bash(rm -rf:*)` also catches `rm --recursive --force`.
_LONG_ALIASES: dict[str, dict[str, str]] = {
    "rm": {"--recursive": "r", "--force": "f", "-R": "r"},
    "git": {"--force": "f"},
}


def normalise_content(content: str) -> str:
    return " ".join(content.split())


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """A compiled rule content. ``flag_prefix``/``flag_letters`` back the deny-only
    flag-set match (``rm -rf`` also matches ``rm -r -f x`` and ``rm -fr x``)."""

    content: str | None
    regex: re.Pattern[str] | None
    flag_prefix: tuple[str, ...] = ()
    flag_letters: frozenset[str] = frozenset()

    def matches(self, text: str) -> bool:
        return self.regex is None or self.regex.fullmatch(text) is not None

    def matches_flags(self, argv: Sequence[str]) -> bool:
        """Deny/ask only: same leading words and a superset of the rule's short flags."""
        if not self.flag_letters or len(argv) < len(self.flag_prefix):
            return False
        if tuple(argv[: len(self.flag_prefix)]) != self.flag_prefix:
            return False
        aliases = _LONG_ALIASES.get(self.flag_prefix[0], {})
        letters: set[str] = set()
        for a in argv[len(self.flag_prefix) :]:
            if a == "--":
                break
            if a in aliases:
                letters.add(aliases[a])
            elif _SHORT_CLUSTER.fullmatch(a):
                letters.update(a[1:])
        return self.flag_letters <= letters


def _translate(base: str) -> str:
    return ".*".join(re.escape(part) for part in base.split("*"))


@lru_cache(maxsize=2048)
def compile_pattern(content: str | None) -> CompiledPattern:
    """Compile a Bash rule content (None = every command)."""
    if content is None:
        return CompiledPattern(None, None)
    c = normalise_content(content)
    if c in ("", "*"):
        return CompiledPattern(c, None)
    open_ended = False
    if c.endswith(":*"):
        base, open_ended = c[:-2].rstrip(), True
    elif c.endswith(" *"):
        base, open_ended = c[:-2].rstrip(), True
    else:
        base = c
    regex = _translate(base) + (r"(?: .*)?" if open_ended else "")
    prefix: tuple[str, ...] = ()
    letters: frozenset[str] = frozenset()
    words = base.split(" ")
    if open_ended and "*" not in base:
        k = len(words)
        while k > 0 and _SHORT_CLUSTER.fullmatch(words[k - 1]):
            k -= 1
        if 0 < k < len(words) and not any(w.startswith("-") for w in words[:k]):
            prefix = tuple(words[:k])
            letters = frozenset("".join(w[1:] for w in words[k:]))
    return CompiledPattern(c, re.compile(regex, re.DOTALL), prefix, letters)
