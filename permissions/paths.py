"""Read/Edit path rules with gitignore semantics, and the working-directory test.

A rule's content is split into an anchor and a pattern:

* ``//abs/x``  -> anchor ``/`` (the filesystem root), pattern ``abs/x``
* ``~/x``      -> anchor the home directory
* ``/x``       -> anchor the rule's ``base_dir`` (its settings file's base; None -> the cwd)
* ``x``, ``./x`` -> anchor the cwd

The pattern then follows gitignore: ``*`` stays inside one segment, ``**`` crosses them, a
pattern without a slash (``.env``) matches at any depth under the anchor, and a pattern that
matches a directory matches everything below it. One asymmetry errs on the safe side: a
single-segment directory pattern ``src/**`` (cwd-relative) in a deny/ask rule matches a ``src``
directory at any depth, while in an allow rule it means only ``<cwd>/src/**``; with an explicit
anchor (``/src/**``, ``~/src/**``, ``//src/**``) it is anchored in every rule.

Symlinks: an allow rule must match both the path as written (normalised) and its real target;
a deny/ask rule applies when either matches.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from permissions.types import PermissionContext, PermissionRule, RuleBehavior

__all__ = [
    "PathPattern",
    "compile_path_pattern",
    "expand_path",
    "first_matching_path_rule",
    "is_inside_working_dirs",
    "is_under",
    "path_rule_matches",
    "path_rule_matches_resolved",
    "real_path",
    "working_roots",
]


def expand_path(path: str | Path, ctx: PermissionContext) -> Path:
    """An absolute, lexically normalised path: ``~`` is ctx.home, relative is under ctx.cwd.

    ``..`` is folded without touching the filesystem (the user's intent as written).
    """
    s = str(path)
    if s == "~" or s.startswith("~/"):
        s = str(ctx.home) + s[1:]
    elif not s.startswith("/"):
        s = os.path.join(str(ctx.cwd), s)
    return Path(os.path.normpath(s))


def real_path(path: Path) -> Path:
    """The path with every symlink resolved (missing tails kept as written)."""
    return Path(os.path.realpath(path))


def is_under(path: Path | str, directory: Path | str) -> bool:
    """True if ``path`` is ``directory`` or below it (both absolute and normalised)."""
    p, d = str(path), str(directory)
    if d == "/":
        return p.startswith("/")
    return p == d or p.startswith(d + "/")


@lru_cache(maxsize=256)
def _resolved_dirs(dirs: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for d in dirs:
        n = os.path.normpath(d)
        out.append(n)
        r = os.path.realpath(n)
        if r != n:
            out.append(r)
    return tuple(out)


def working_roots(ctx: PermissionContext) -> tuple[str, ...]:
    """The working directories, normalised, each followed by its real path if different."""
    extra = ctx.additional_dirs
    if not extra:
        return _resolved_dirs((str(ctx.cwd),))
    return _resolved_dirs((str(ctx.cwd), *map(str, extra)))


def is_inside_working_dirs(path: Path | str, ctx: PermissionContext) -> bool:
    """True if the path, as written and after resolving symlinks, lies in a working dir.

    Both must hold: a link inside the project pointing at ``/etc/passwd`` is not "inside".
    """
    lexical = expand_path(path, ctx)
    dirs = working_roots(ctx)
    if not any(is_under(lexical, d) for d in dirs):
        return False
    real = real_path(lexical)
    return real == lexical or any(is_under(real, d) for d in dirs)


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A compiled path rule: paths relative to one of ``anchors`` are matched by ``regex``."""

    text: str
    anchors: tuple[str, ...]  # the anchor as written and its real path, if different
    regex: re.Pattern[str]
    glob: str = ""  # the pattern below the anchor, as matched (for callers that walk a tree)
    floating: bool = False  # it matches at any depth under the anchor

    def matches(self, path: Path | str) -> bool:
        """Does this pattern match the absolute normalised ``path``?"""
        p = str(path)
        for anchor in self.anchors:
            if anchor == "/":
                rel = p.lstrip("/")
            elif p == anchor:
                rel = ""
            elif p.startswith(anchor + "/"):
                rel = p[len(anchor) + 1 :]
            else:
                continue
            if self.regex.match(rel):
                return True
        return False


def _translate(pattern: str) -> str:
    """gitignore glob -> regex body (no anchors)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            before_ok = i == 0 or pattern[i - 1] == "/"
            after = pattern[i + 2 : i + 3]
            if before_ok and after == "/":
                out.append("(?:.*/)?")  # `**/` : zero or more whole segments
                i += 3
                continue
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            close = pattern.find("]", i + 2)
            if close == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = close + 1
                continue
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


_SINGLE_DIR_GLOB = re.compile(r"^[^/*?\[]+/\*\*$")


@lru_cache(maxsize=2048)
def _compile(text: str, any_depth_dirs: bool, cwd: str, home: str, base: str) -> PathPattern:
    if text.startswith("//"):
        anchor, pattern, any_depth_dirs = "/", text[2:], False
    elif text == "~" or text.startswith("~/"):
        anchor, pattern, any_depth_dirs = home, text[2:], False
    elif text.startswith("/"):
        anchor, pattern, any_depth_dirs = base, text[1:], False
    else:
        anchor, pattern = cwd, text
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if pattern == ".":
            pattern = ""
    pattern = pattern.rstrip("/") if pattern not in ("", "/") else ""
    floating = bool(pattern) and (
        "/" not in pattern or bool(any_depth_dirs and _SINGLE_DIR_GLOB.match(pattern))
    )
    if not pattern:
        body = ".*"
    elif floating:
        body = "(?:.*/)?" + _translate(pattern)
    else:
        body = _translate(pattern)
    regex = re.compile(f"^(?:{body})(?:/.*)?$", re.DOTALL)
    anchor = os.path.normpath(anchor)
    anchors: tuple[str, ...] = (anchor,)
    real = os.path.realpath(anchor)
    if real != anchor:
        anchors = (anchor, real)
    return PathPattern(text, anchors, regex, pattern, floating)


def compile_path_pattern(
    text: str,
    ctx: PermissionContext,
    *,
    base_dir: Path | None = None,
    behavior: RuleBehavior = RuleBehavior.ALLOW,
) -> PathPattern:
    """Compile a Read/Edit rule content for this context (cached)."""
    base = str(base_dir) if base_dir is not None else str(ctx.cwd)
    return _compile(text, behavior is not RuleBehavior.ALLOW, str(ctx.cwd), str(ctx.home), base)


def path_rule_matches(rule: PermissionRule, path: Path | str, ctx: PermissionContext) -> bool:
    """Does the path rule match ``path``? A rule without content matches every path.

    Allow rules need the path and its real target to match; deny/ask rules need either.
    """
    if rule.value.content is None:
        return True
    lexical = expand_path(path, ctx)
    return path_rule_matches_resolved(rule, str(lexical), str(real_path(lexical)), ctx)


def path_rule_matches_resolved(
    rule: PermissionRule, lexical: str, real: str, ctx: PermissionContext
) -> bool:
    """``path_rule_matches`` for a path already expanded (``lexical``) and resolved (``real``),
    so a caller checking several rules resolves symlinks once."""
    if rule.value.content is None:
        return True
    pat = compile_path_pattern(
        rule.value.content, ctx, base_dir=rule.base_dir, behavior=rule.behavior
    )
    if rule.behavior is RuleBehavior.ALLOW:
        return pat.matches(lexical) and (real == lexical or pat.matches(real))
    return pat.matches(lexical) or (real != lexical and pat.matches(real))


def first_matching_path_rule(
    rules: Iterable[PermissionRule], path: Path | str, ctx: PermissionContext
) -> PermissionRule | None:
    """The first rule (in the given order) whose path pattern matches ``path``."""
    # symlinks are resolved once for all the rules, and only if a rule has content
    lexical: str | None = None
    real = ""
    for rule in rules:
        if rule.value.content is None:
            return rule
        if lexical is None:
            expanded = expand_path(path, ctx)
            lexical, real = str(expanded), str(real_path(expanded))
        if path_rule_matches_resolved(rule, lexical, real, ctx):
            return rule
    return None
