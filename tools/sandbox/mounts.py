"""The sandbox's view of the filesystem, as bubblewrap arguments (later mounts lie on top).

1. everything read-only (``--ro-bind / /``), a private ``/dev`` and ``/proc``;
2. the writable set bound read-write: working directories, ``--add-dir`` directories, the
   session's temp dir and ``sandbox.filesystem.allowWrite`` (subdirectories included);
3. protected paths inside it bound read-only again: ``.git/hooks``, ``.git/config``,
   ``.claude/``, ``.nerve/``, editor and CI config dirs, settings and shell rc files, Nerve's data
   dir (its folder-trust store); a missing ``.claude``/``.nerve``/``.git/hooks`` gets an empty
   stub directory first (``tools.sandbox.stubs``), removed after the command;
4. ``denyWrite`` bound read-only, ``denyRead`` hidden behind an unreadable (mode 000) empty
   file or directory, and ``allowRead`` bound back inside a hidden directory.

Only paths that exist are mounted (a missing one would fail every command); globs are expanded
when the command starts, so a file created later that matches a ``denyRead`` glob is not hidden
from Bash (the file tools still refuse it, by rule). Symlinks are followed to their targets, so a
link from the project to outside cannot be written through; hard links cannot be made across
the mounts (``EXDEV``), though one made outside beforehand is the same file.
"""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from permissions.safety import PROTECTED_FILES
from tools.sandbox.stubs import StubRegistry

__all__ = ["PROTECTED_SUBDIRS", "MountPlan", "expand_patterns", "plan_mounts"]

# Directories read-only inside a writable directory (relative to it); .cargo, .yarn and .mvn
# are protected from the file tools but hold caches builds must write, so not here.
PROTECTED_SUBDIRS: Final[tuple[str, ...]] = (
    ".claude",
    ".nerve",
    ".vscode",
    ".idea",
    ".husky",
    ".devcontainer",
    ".config/git",
    ".config/nerve",
    ".git/hooks",
    ".git/config",
)
# Missing ones that get a stub (a command could otherwise create them, then code would run).
_STUBBED: Final[tuple[str, ...]] = (".claude", ".nerve", ".git/hooks")
_EXEMPT: Final[tuple[str, ...]] = (".claude/worktrees", ".nerve/worktrees")
_MAX_MATCHES: Final = 1000


@dataclass(slots=True)
class MountPlan:
    """bubblewrap options for one command, the stubs it holds, and what it had to skip."""

    args: list[str] = field(default_factory=list)
    stubs: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _has_magic(text: str) -> bool:
    return any(c in text for c in "*?[")


def expand_patterns(patterns: Iterable[str]) -> list[Path]:
    """Existing paths the patterns name (``~`` already expanded), at most 1000 per pattern."""
    out: list[Path] = []
    for pattern in patterns:
        if not _has_magic(pattern):
            if os.path.lexists(pattern):
                out.append(Path(pattern))
            continue
        found = glob.iglob(pattern, recursive="**" in pattern, include_hidden=True)
        out += [Path(p) for p in itertools.islice(found, _MAX_MATCHES)]
    return out


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _under(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


_TOP_NAMES: Final[frozenset[str]] = frozenset(
    {name.split("/", 1)[0] for name in PROTECTED_SUBDIRS} | PROTECTED_FILES
)


def _protected_in(root: Path, stubs: StubRegistry | None, plan: MountPlan) -> list[Path]:
    """The protected paths under ``root`` (one directory listing, a few stats), and stubs for
    the missing ones that need them when ``stubs`` is given."""
    try:
        present = set(os.listdir(root)) & _TOP_NAMES
    except OSError:
        return []
    out: list[Path] = []
    for name in (*PROTECTED_SUBDIRS, *sorted(PROTECTED_FILES)):
        top = name.split("/", 1)[0]
        candidate = root / name
        if top in present and os.path.exists(candidate):  # a dangling link cannot be mounted
            out.append(candidate)
        elif (
            not os.path.lexists(candidate)
            and stubs is not None
            and name in _STUBBED
            and stubs.acquire(candidate)
        ):
            plan.stubs.append(candidate)
            out.append(candidate)
    return out


def plan_mounts(
    *,
    writable: Sequence[Path],
    stub_roots: Sequence[Path],
    deny_write: Iterable[str],
    deny_read: Iterable[str],
    allow_read: Iterable[str],
    protect: Sequence[Path],
    void: Callable[[], int],
    stubs: StubRegistry,
) -> MountPlan:
    """The mount arguments (see the module docstring). ``protect`` are extra directories to
    keep read-only (the home directory, for its rc files; Nerve's data dir); ``void()`` opens a
    descriptor that reads as empty (``/dev/null``) for each hidden file (bubblewrap closes it)."""
    plan = MountPlan()
    rw = list(dict.fromkeys(_real(p) for p in writable if p.exists()))
    for path in rw:
        plan.args += ["--bind", str(path), str(path)]
    # ro: protected names in every writable root, and in the extra protected places under them
    ro: list[Path] = []
    scan = [*rw, *(_real(p) for p in protect if p.exists() and _under(_real(p), rw))]
    stub_at = {_real(p) for p in stub_roots}
    for root in dict.fromkeys(scan):
        ro += _protected_in(root, stubs if root in stub_at else None, plan)
    ro += [_real(p) for p in protect if p.exists() and _under(_real(p), rw) and _real(p) not in rw]
    ro += [p for p in (_real(p) for p in expand_patterns(deny_write)) if _under(p, rw)]
    for path in dict.fromkeys(ro):
        plan.args += ["--ro-bind", str(path), str(path)]
    for exempt in (r / e for r in rw for e in _EXEMPT):
        if exempt.is_dir():
            plan.args += ["--bind", str(exempt), str(exempt)]
    hidden = list(dict.fromkeys(_real(p) for p in expand_patterns(deny_read)))
    for path in hidden:
        if path.is_dir():
            plan.args += ["--perms", "0000", "--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            plan.args += ["--perms", "0000", "--ro-bind-data", str(void()), str(path)]
    for path in (_real(p) for p in expand_patterns(allow_read)):
        if _under(path, hidden) and path not in hidden:
            plan.args += ["--bind" if _under(path, rw) else "--ro-bind", str(path), str(path)]
    return plan
