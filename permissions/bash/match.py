"""``Bash(content)`` rule patterns: exact, legacy ``prefix:*``, word-boundary `` *``, ``*``.

Patterns are compiled once per distinct content (cached) and matched against the normalised
text of one simple command: its argv joined by single spaces.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, TypeVar

_R = TypeVar("_R")

__all__ = ["CompiledPattern", "RuleMatcher", "compile_pattern", "normalise_content"]

_SHORT_CLUSTER = re.compile(r"-[A-Za-z]+")
# Long spellings and case variants of short flags, per program, so that `Bash(rm -rf:*)` also
# catches `rm -Rf`, `rm --recursive --force` and GNU's unique prefixes (`rm --rec --fo`).
_LONG_ALIASES: dict[str, dict[str, str]] = {
    "rm": {"--recursive": "-r", "--force": "-f", "--dir": "-d", "--verbose": "-v"},
    "cp": {"--recursive": "-r", "--force": "-f", "--archive": "-a"},
    "git": {"--force": "-f", "--force-with-lease": "-f", "--delete": "-d"},
    "chmod": {"--recursive": "-R"},
    "chown": {"--recursive": "-R"},
    "curl": {"--output": "-o", "--remote-name": "-O", "--insecure": "-k"},
}
_SHORT_ALIASES: dict[str, dict[str, str]] = {"rm": {"-R": "-r"}, "cp": {"-R": "-r"}}


def normalise_content(content: str) -> str:
    return " ".join(content.split())


def _flag_tokens(prog: str, word: str, known_long: frozenset[str]) -> list[str]:
    """Canonical flag tokens of one word (``-rf`` -> ``-r -f``); [] for an operand."""
    if word.startswith("--") and len(word) > 2:
        name = word.split("=", 1)[0]
        aliases = _LONG_ALIASES.get(prog, {})
        if name not in aliases and name not in known_long:
            # GNU getopt accepts any unambiguous prefix of a long option
            # (ambiguous between spellings of one flag is still that flag: --for, git push)
            hits = {aliases.get(f, f) for f in (*aliases, *known_long) if f.startswith(name)}
            if len(hits) == 1:
                return [hits.pop()]
        return [aliases.get(name, name)]
    if _SHORT_CLUSTER.fullmatch(word):
        shorts = _SHORT_ALIASES.get(prog, {})
        return [shorts.get("-" + ch, "-" + ch) for ch in word[1:]]
    return []


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """A compiled rule content.

    ``flag_prefix``/``flags``/``operands`` back the deny/ask-only flag-set match: the same
    leading words, then at least the rule's flags in any order and spelling (``rm -rf`` also
    matches ``rm -r -f x``, ``rm -fr x``, ``rm --recursive --force x``), and the rule's
    operands (all of them for an exact rule, as a prefix for an open-ended one).
    """

    content: str | None
    regex: re.Pattern[str] | None
    flag_prefix: tuple[str, ...] = ()
    flags: frozenset[str] = frozenset()
    operands: tuple[str, ...] = ()
    open_ended: bool = True

    def matches(self, text: str) -> bool:
        return self.regex is None or self.regex.fullmatch(text) is not None

    def matches_flags(self, argv: Sequence[str]) -> bool:
        """Deny/ask only: same leading words, a superset of the rule's flags, its operands."""
        n = len(self.flag_prefix)
        if not self.flags or len(argv) < n or tuple(argv[:n]) != self.flag_prefix:
            return False
        prog = self.flag_prefix[0]
        longs = frozenset(f for f in self.flags if f.startswith("--"))
        seen: set[str] = set()
        operands: list[str] = []
        end = False
        for a in argv[n:]:
            if end:
                operands.append(a)
            elif a == "--":
                end = True
            else:
                toks = _flag_tokens(prog, a, longs)
                seen.update(toks)
                if not toks:
                    operands.append(a)
        if not self.flags <= seen:
            return False
        k = len(self.operands)
        if self.open_ended:
            return tuple(operands[:k]) == self.operands
        return tuple(operands) == self.operands


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
    regex = re.compile(_translate(base) + (r"(?: .*)?" if open_ended else ""), re.DOTALL)
    words = base.split(" ")
    k = next((i for i, w in enumerate(words) if w.startswith("-") and w != "-"), len(words))
    if "*" in base or k == 0 or k == len(words) or "--" in words:
        return CompiledPattern(c, regex, open_ended=open_ended)
    prog = words[0]
    flags: set[str] = set()
    operands: list[str] = []
    longs = frozenset(w.split("=", 1)[0] for w in words[k:] if w.startswith("--"))
    for w in words[k:]:
        toks = _flag_tokens(prog, w, longs)
        flags.update(toks)
        if not toks:
            operands.append(w)
    return CompiledPattern(
        c, regex, tuple(words[:k]), frozenset(flags), tuple(operands), open_ended
    )


@lru_cache(maxsize=1024)
def _alternation(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{r})" for r in patterns), re.DOTALL)


class RuleMatcher(Generic[_R]):
    """The rules of one behaviour compiled together: one alternation of every rule's regex
    rejects a command in a single ``fullmatch``; only a hit walks the rules in order."""

    __slots__ = ("_always", "_combined", "_flagged", "_rules")

    def __init__(self, rules: Sequence[tuple[_R, CompiledPattern]]) -> None:
        self._rules = tuple(rules)
        self._always = any(p.regex is None for _, p in rules)
        self._combined = _alternation(
            tuple(p.regex.pattern for _, p in rules if p.regex is not None)
        )
        self._flagged = tuple(p for _, p in rules if p.flags)

    def __bool__(self) -> bool:
        return bool(self._rules)

    def first(self, forms: Sequence[Sequence[str]], flag_sets: bool = True) -> _R | None:
        """The first rule (in rule order) matching any form. ``flag_sets``: also the
        reordered-flags match (deny and ask only: more flags than written must not widen
        what an allow rule covers)."""
        if not self._rules or not forms:
            return None
        return self.first_of(forms, [" ".join(f) for f in forms], flag_sets)

    def first_of(
        self, forms: Sequence[Sequence[str]], texts: Sequence[str], flag_sets: bool = True
    ) -> _R | None:
        """``first`` with the forms already joined into ``texts`` (same order)."""
        if not self._rules or not texts:
            return None
        hit = self._always or any(self._combined.fullmatch(t) for t in texts)
        if not hit and flag_sets and self._flagged:
            hit = any(p.matches_flags(f) for p in self._flagged for f in forms)
        if not hit:
            return None
        for rule, pat in self._rules:
            for k, text in enumerate(texts):
                if pat.matches(text) or (flag_sets and pat.matches_flags(forms[k])):
                    return rule
        return None
