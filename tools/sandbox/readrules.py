"""``Read(...)`` deny rules, as paths the sandbox hides from Bash.

A deny rule stops Read, Grep and Glob, but ``grep -r PASSWORD .`` in Bash opens files itself;
so with the sandbox on, the existing paths a ``Read`` deny rule matches are hidden like
``sandbox.filesystem.denyRead`` (``tools.sandbox.mounts``). The rule's meaning is the engine's:
:func:`permissions.paths.compile_path_pattern` (anchors ``//``, ``~/``, ``/`` and the cwd,
gitignore globs) decides what matches; this module only looks for the matching paths: a literal
path is checked, a glob is walked from its literal prefix (from the anchor when the pattern
floats to any depth, like ``.env`` or ``secrets/**``), stopping at what matches. A directory
whose every possible child matches (``secrets/**``) is hidden whole.

Limits, said in a notice when they bite: a walk looks at 20000 entries per rule; it does not
enter ``.git`` (git objects are compressed, hiding a ref would break git, and git itself can
print a committed secret anyway); a file created after the command starts is not hidden (the
rule still stops the file tools).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import Final

from permissions.paths import PathPattern, compile_path_pattern
from permissions.types import PermissionContext, RuleBehavior, RuleSource
from tools.records import datarecord

__all__ = ["DeniedReads", "denied_reads"]

_MAX_VISITS: Final = 20000
_MAX_MATCHES: Final = 1000
_SKIP_BELOW_ROOT: Final = frozenset({"proc", "sys", "dev"})  # a walk from / skips these
_ANY: Final = "\x00"  # a name no file can have: "every child matches" is tested with it


@datarecord(slots=True)
class DeniedReads:
    """Existing paths ``Read`` deny rules match, and notes on what could not be searched."""

    paths: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _has_magic(segment: str) -> bool:
    return any(c in segment for c in "*?[\\")


def _start(pattern: PathPattern) -> tuple[Path, bool]:
    """Where to look: (the deepest literal directory, whether a walk is needed below it)."""
    anchor = Path(pattern.anchors[0])
    if pattern.floating:
        return anchor, True
    parts = pattern.glob.split("/") if pattern.glob else []
    literal: list[str] = []
    for part in parts:
        if _has_magic(part):
            return anchor.joinpath(*literal), True
        literal.append(part)
    return anchor.joinpath(*literal), False


def _whole(pattern: PathPattern, path: str) -> bool:
    """Every path below ``path`` matches (``secrets/**``): hide the directory itself."""
    return pattern.matches(f"{path}/{_ANY}") and pattern.matches(f"{path}/{_ANY}/{_ANY}")


def _walk(pattern: PathPattern, top: Path, budget: list[int]) -> Iterator[Path]:
    """Matching paths under ``top`` (itself included), not entering a match or ``.git``."""
    if pattern.matches(str(top)) or (top.is_dir() and _whole(pattern, str(top))):
        yield top
        return
    pending = [str(top)]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return
            is_dir = entry.is_dir(follow_symlinks=False)
            if pattern.matches(entry.path) or (is_dir and _whole(pattern, entry.path)):
                yield Path(entry.path)
            elif is_dir and entry.name != ".git":
                if current != "/" or entry.name not in _SKIP_BELOW_ROOT:
                    pending.append(entry.path)


def _matches(pattern: PathPattern, out: DeniedReads) -> None:
    top, walk = _start(pattern)
    if not walk:
        if os.path.lexists(top):
            out.paths.append(top)
        return
    if not top.is_dir():
        return
    budget = [_MAX_VISITS]
    found = 0
    for path in _walk(pattern, top, budget):
        out.paths.append(path)
        found += 1
        if found >= _MAX_MATCHES:
            out.notes.append(
                f"[sandbox] Read({pattern.text}): only the first {found} matches hidden"
            )
            return
    if budget[0] < 0:
        out.notes.append(
            f"[sandbox] Read({pattern.text}): stopped searching {top} after {_MAX_VISITS} entries; "
            "matches beyond are readable by Bash (the file tools still refuse them)"
        )


def denied_reads(perms: PermissionContext) -> DeniedReads:
    """The existing paths the ``Read(...)`` deny rules of ``perms`` match. The sandbox's own
    rules (from ``denyRead``) are hidden from their settings already; a bare ``Read`` deny
    (every path) is left to the file tools: hiding everything would leave Bash nothing."""
    out = DeniedReads()
    for rule in perms.rules:
        content = rule.value.content
        if (
            rule.behavior is not RuleBehavior.DENY
            or rule.value.tool_name != "Read"
            or rule.source is RuleSource.SANDBOX
            or not content
        ):
            continue
        pattern = compile_path_pattern(
            content, perms, base_dir=rule.base_dir, behavior=RuleBehavior.DENY
        )
        if pattern.glob:  # Read(//) or Read(./) deny everything below: as a bare Read
            _matches(pattern, out)
    out.paths = list(dict.fromkeys(out.paths))
    return out
