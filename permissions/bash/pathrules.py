"""Helpers of the bash path checks: which path rules apply, path normalisation, the path part
of a word (``--file=X``), the argv a command really runs, and the suggestion offered for a
directory outside the working dirs."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from permissions.bash.analysis import CommandFacts
from permissions.bash.words import Word
from permissions.bash.wrappers import strip_allow_wrapper
from permissions.paths import compile_path_pattern
from permissions.types import PermissionContext, PermissionRule, RuleBehavior, RuleValue

__all__ = [
    "ANY_DEPTH",
    "GLOB_MAGIC",
    "HOME_NAMED",
    "HOME_WORD",
    "SAFE_READS",
    "PathRules",
    "RuleReach",
    "core_argv",
    "dir_suggestion",
    "norm",
    "path_rules",
    "path_shape",
    "real_root",
    "root_prefixes",
    "rule_reaches",
    "shapes_meet",
    "unquote_rest",
    "word_from",
]

# Devices that are not files of anyone's: reading them reveals nothing.
SAFE_READS = frozenset(
    {"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"}
    | {"/dev/random", "/dev/urandom"}
)
HOME_WORD = re.compile(r'^(")?\$(?:HOME\b|\{HOME\})(.*)$', re.DOTALL)
HOME_NAMED = re.compile(r"(?<![\w${])HOME\b")  # HOME=, export HOME, read HOME, for HOME in
GLOB_MAGIC = re.compile(r"[*?[]")  # a path with one of these may be a glob
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


def word_from(word: Word, offset: int) -> Word:
    """The part of ``word`` from character ``offset`` on (``--file=X`` -> ``X``)."""
    if not offset:
        return word
    shown = word.shown[offset:]
    value = shown if word.value is not None else None
    return Word(shown, value, value, word.glob, word.brace)


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


# ---------------------------------------------------------------- what a rule may reach
#
# A recursive read (`grep -r x DIR`) or a glob (`cat */*.txt`) reads paths that are not
# written anywhere in the command. Whether a Read deny rule could cover one of them is decided
# from the rule's pattern and the command's words alone, never by walking the file system:
# both are turned into *path shapes* (one pattern per path segment, or ANY_DEPTH for any number
# of segments) and the shapes are intersected.

ANY_DEPTH = "**"  # a path-shape element: zero or more whole segments
_Tok = tuple[str, ...]  # ("=", ch) a literal char, ("*",), ("?",), ("[", body, "!" or "")
Seg = tuple[_Tok, ...]
Shape = tuple[Seg | str, ...]
_ANY_SEG: Seg = (("*",),)
_EXTGLOB = re.compile(r"[?*+@!]\(")


@lru_cache(maxsize=4096)
def _seg(text: str, magic: bool = True, escapes: bool = False, loose: bool = False) -> Seg:
    """The tokens of one segment pattern (``magic``: ``* ? [..]`` are wildcards; ``loose``: a
    bracket expression becomes ``*``, which matches both what it matches and its own text,
    for words where it may be a literal name: `proj[1]` in the working directory's path)."""
    if not magic:
        return tuple(("=", c) for c in text)
    if _EXTGLOB.search(text):
        return _ANY_SEG  # an extglob (`@(a|b)`): any segment, rather than a parser of them
    out: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        close = text.find("]", i + 2) if c == "[" else -1
        if c == "*":
            if not out or out[-1] != ("*",):
                out.append(("*",))
        elif c == "?":
            out.append(("?",))
        elif close != -1 and loose:
            if not out or out[-1] != ("*",):
                out.append(("*",))
            i = close + 1
            continue
        elif close != -1:
            body = text[i + 1 : close]
            neg = "!" if body[:1] in ("!", "^") else ""
            body = body[1:] if neg else body
            # a class (`[[:alpha:]]`) or anything odd: any one character
            out.append(("?",) if "[:" in body or not body else ("[", body, neg))
            i = close + 1
            continue
        elif c == "\\" and escapes and i + 1 < n:
            out.append(("=", text[i + 1]))
            i += 2
            continue
        else:
            out.append(("=", c))
        i += 1
    return tuple(out)


def _ranges(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            out.append((body[k], body[k + 2]))
            k += 3
        else:
            out.append((body[k], body[k]))
            k += 1
    return out


def _chars_meet(a: _Tok, b: _Tok) -> bool:
    """Can one character match both single-character tokens?"""
    if a[0] == "?" or b[0] == "?":
        return True
    if a[0] == "=" and b[0] == "=":
        return a[1] == b[1]
    if a[0] == "=" or b[0] == "=":
        ch, (_, body, neg) = (a[1], b) if a[0] == "=" else (b[1], a)
        return any(lo <= ch <= hi for lo, hi in _ranges(body)) != bool(neg)
    if a[2] or b[2]:
        return True  # a negated class meets nearly anything
    return any(
        alo <= bhi and blo <= ahi for alo, ahi in _ranges(a[1]) for blo, bhi in _ranges(b[1])
    )


@lru_cache(maxsize=8192)
def _segs_meet(a: Seg, b: Seg) -> bool:
    """Is there a name both segment patterns match?"""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key not in memo:
            memo[key] = False  # no cycles: every step advances i or j
            if i < len(a) and a[i] == ("*",):
                found = go(i + 1, j) or (j < len(b) and go(i, j + 1))
            elif j < len(b) and b[j] == ("*",):
                found = go(i, j + 1) or (i < len(a) and go(i + 1, j))
            elif i == len(a) or j == len(b):
                found = i == len(a) and j == len(b)
            else:
                found = _chars_meet(a[i], b[j]) and go(i + 1, j + 1)
            memo[key] = found
        return memo[key]

    return go(0, 0)


@lru_cache(maxsize=4096)
def shapes_meet(a: Shape, b: Shape) -> bool:
    """Is there a path both shapes match? (cached: the same folders come back call after
    call, against the same rules)"""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key not in memo:
            memo[key] = False
            x = a[i] if i < len(a) else None
            y = b[j] if j < len(b) else None
            if x == ANY_DEPTH:
                found = go(i + 1, j) or (y is not None and go(i, j + 1))
            elif y == ANY_DEPTH:
                found = go(i, j + 1) or (x is not None and go(i + 1, j))
            elif x is None or y is None:
                found = x is None and y is None
            else:
                found = _segs_meet(x, y) and go(i + 1, j + 1)  # type: ignore[arg-type]
            memo[key] = found
        return memo[key]

    return go(0, 0)


@lru_cache(maxsize=4096)
def path_shape(path: str, below: bool) -> Shape:
    """The shape of an absolute path as a command words it (``*``, ``?``, ``[..]`` are bash
    wildcards, yet may be literal characters of a name: both are matched, which can only cost
    a question); ``below``: also every path under it (a recursive read)."""
    out: list[Seg | str] = []
    for part in path.split("/"):
        if part:
            # `**` is `*` unless `shopt -s globstar`: assume it may be on
            out.append(ANY_DEPTH if part == "**" else _seg(part, magic=True, loose=True))
    if below:
        out.append(ANY_DEPTH)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class RuleReach:
    """The paths a Read rule covers, as shapes (one per anchor: as written, and real)."""

    rule: PermissionRule
    shapes: tuple[Shape, ...]
    pattern: str  # the rule's pattern below its anchor, for messages
    base: str  # its anchor and leading literal segments (`<cwd>/secrets`), for messages
    any_depth: bool  # it matches at any depth below its anchor (`.env`, `**/.env`, `src/**`)
    whole: bool  # ``base`` is the whole pattern (`//etc/shadow`)

    def what(self, folder: str) -> str:
        """What of ``folder`` the rule may cover, for messages: ``secrets/`` (its base below
        the folder), ``.env at any depth``, else the pattern."""
        if self.any_depth:
            return f"{self.pattern or '*'} at any depth"
        top = folder.rstrip("/") + "/"
        if self.base.startswith(top):
            return self.base[len(top) :] + ("" if self.whole else "/")
        return self.pattern or self.base


def _rule_segments(pattern: str) -> list[Seg | str]:
    """Shape elements of a gitignore pattern, as ``permissions.paths`` translates it."""
    parts = [p for p in pattern.split("/") if p]
    out: list[Seg | str] = []
    for k, part in enumerate(parts):
        if part == "**":
            # `a/**` needs something below `a`; a leading or inner `**/` may match nothing
            out += [_ANY_SEG, ANY_DEPTH] if k == len(parts) - 1 and k > 0 else [ANY_DEPTH]
        elif "**" in part:
            out += [_ANY_SEG, ANY_DEPTH]  # `a**b` may cross slashes: any path below
        else:
            out.append(_seg(part, magic=True, escapes=True))
    return out


@lru_cache(maxsize=512)
def _reach(rule: PermissionRule, cwd: str, home: str) -> RuleReach:
    text = rule.value.content or ""
    ctx = PermissionContext(cwd=Path(cwd), home=Path(home))
    compiled = compile_path_pattern(text, ctx, base_dir=rule.base_dir, behavior=rule.behavior)
    if text.startswith("//"):
        pattern = text[2:]
    elif text == "~" or text.startswith(("~/", "/")):
        pattern = text[2:] if text.startswith("~") else text[1:]
    else:
        pattern = text
        while pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = "" if pattern == "." else pattern
    # Whether it matches at any depth is read off the compiled rule, so that this stays what
    # permissions.paths decides (a bare name, `**/x`, a deny `dir/**`).
    any_depth = compiled.regex.pattern.startswith("^(?:(?:.*/)?")
    segs = _rule_segments(pattern)
    tail: list[Seg | str] = [ANY_DEPTH, *segs] if any_depth else segs
    tail.append(ANY_DEPTH)  # a rule matching a folder covers everything below it
    shapes = []
    for anchor in compiled.anchors:
        head: list[Seg | str] = [_seg(p, magic=False) for p in anchor.split("/") if p]
        shapes.append(tuple(head + tail))
    parts = [p for p in pattern.split("/") if p]
    literal = 0
    while literal < len(parts) and not re.search(r"[*?\[\\]", parts[literal]):
        literal += 1
    base = "/".join([compiled.anchors[0].rstrip("/"), *parts[:literal]])
    whole = literal == len(parts)
    return RuleReach(rule, tuple(shapes), pattern, base or "/", any_depth, whole)


def rule_reaches(rules: Iterable[PermissionRule], ctx: PermissionContext) -> tuple[RuleReach, ...]:
    """The reach of each (content) rule of ``rules`` in ``ctx``."""
    cwd, home = str(ctx.cwd), str(ctx.home)
    return tuple(_reach(r, cwd, home) for r in rules if r.value.content)
