"""Helpers of the bash path checks: which path rules apply, path normalisation, the argv
a command really runs, and the suggestion offered for a directory outside the working dirs."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

from permissions.bash.analysis import CommandFacts
from permissions.bash.words import Word
from permissions.bash.wrappers import strip_allow_wrapper
from permissions.types import PermissionContext, PermissionRule, RuleBehavior, RuleValue

__all__ = [
    "HOME_NAMED",
    "HOME_WORD",
    "SAFE_READS",
    "PathRules",
    "core_argv",
    "dir_suggestion",
    "norm",
    "path_rules",
    "real_root",
    "root_prefixes",
    "unquote_rest",
]

# Devices that are not files of anyone's: reading them reveals nothing.
SAFE_READS = frozenset(
    {"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"}
    | {"/dev/random", "/dev/urandom"}
)
HOME_WORD = re.compile(r'^(")?\$(?:HOME\b|\{HOME\})(.*)$', re.DOTALL)
HOME_NAMED = re.compile(r"(?<![\w${])HOME\b")  # HOME=, export HOME, read HOME, for HOME in
_UNQUOTED_SPECIAL = frozenset("$`\\*?[{")


@dataclass(frozen=True, slots=True)
class PathRules:
    """The Read/Edit content rules that bear on paths bash reads and writes."""

    read_deny: tuple[PermissionRule, ...]
    read_ask: tuple[PermissionRule, ...]
    read_allow: tuple[PermissionRule, ...]
    write_deny: tuple[PermissionRule, ...]  # Edit and Read deny rules
    write_ask: tuple[PermissionRule, ...]
    write_allow: tuple[PermissionRule, ...]


_RULES: dict[int, tuple[tuple[PermissionRule, ...], PathRules]] = {}


def path_rules(ctx: PermissionContext) -> PathRules:
    """The Read/Edit content rules of ``ctx``, sorted once per rules tuple."""
    rules = ctx.rules
    hit = _RULES.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]

    def pick(tools: tuple[str, ...], behavior: RuleBehavior) -> tuple[PermissionRule, ...]:
        return tuple(
            r
            for r in rules
            if r.behavior is behavior and r.value.tool_name in tools and r.value.content
        )

    out = PathRules(
        pick(("Read",), RuleBehavior.DENY),
        pick(("Read",), RuleBehavior.ASK),
        pick(("Read",), RuleBehavior.ALLOW),
        pick(("Edit", "Read"), RuleBehavior.DENY),
        pick(("Edit",), RuleBehavior.ASK),
        pick(("Edit",), RuleBehavior.ALLOW),
    )
    if type(rules) is tuple:
        if len(_RULES) > 512:
            _RULES.clear()
        _RULES[id(rules)] = (rules, out)
    return out


@lru_cache(maxsize=64)
def real_root(root: str) -> str:
    return os.path.realpath(root)


@lru_cache(maxsize=64)
def root_prefixes(roots: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(d.rstrip("/") + "/" for d in roots)


@lru_cache(maxsize=1024)
def dir_suggestion(path: str, written: bool, is_dir: bool) -> RuleValue:
    """``Read(//dir/**)`` (``Edit`` for a write) for the directory of ``path``."""
    folder = path if is_dir else os.path.dirname(path)
    if folder == "/" and path != "/":
        folder = path  # never suggest the whole file system for a missing path
    return RuleValue("Edit" if written else "Read", f"/{folder}/**".replace("///", "//"))


@lru_cache(maxsize=4096)
def norm(path: str) -> str:
    """Lexically normalised absolute path (cached: the same paths come back call after call)."""
    path = os.path.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path


def unquote_rest(rest: str) -> str | None:
    """Quote removal for what follows ``$HOME`` in a word; None if anything else expands."""
    out: list[str] = []
    quote = ""
    for ch in rest:
        if ch in "\"'" and (not quote or quote == ch):
            quote = "" if quote else ch
        elif ch in _UNQUOTED_SPECIAL and (not quote or ch in "$`\\"):
            return None
        else:
            out.append(ch)
    return None if quote else "".join(out)


def core_argv(f: CommandFacts) -> tuple[list[str], tuple[Word, ...]] | None:
    """The argv that runs after transparent wrappers (whatever the assignments in front)."""
    words = f.cmd.words
    if f.cmd.kind != "command" or not words:
        return None
    core = f.core
    if core is None:
        core = [w.shown for w in words]
        while True:
            nxt = strip_allow_wrapper(core)
            if nxt is None and core[0] == "env":
                rest = core[1:]
                while rest and "=" in rest[0] and not rest[0].startswith(("=", "-")):
                    rest = rest[1:]
                nxt = rest if rest and not rest[0].startswith("-") else None
            if not nxt:
                break
            core = nxt
    n, k = len(words), len(core)
    if k > n or core[0] == "xargs":
        return None
    return core, (words if k == n else words[n - k :])
