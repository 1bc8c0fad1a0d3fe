"""The sandbox's view of the filesystem, as bubblewrap arguments (later mounts lie on top).

1. everything read-only (``--ro-bind / /``), a private ``/dev`` and ``/proc``;
2. the writable set bound read-write: working directories, ``--add-dir`` directories, the
   session's temp dir and ``sandbox.filesystem.allowWrite`` (subdirectories included);
3. protected paths inside it bound read-only again: ``.claude/``, ``.nerve/``, editor and CI
   config dirs, settings and shell rc files, Nerve's data dir (its folder-trust store), what
   git reads for configuration (``tools.sandbox.gitguard``: ``.git/config``, ``hooks/``,
   ``commondir``, submodules, those only the index records too, ...) and ``denyWrite``; a
   missing ``.claude``/``.nerve``/``.git`` (and a few files inside ``.git``, and a submodule
   path with nothing checked out) gets a stub first (``tools.sandbox.stubs``), removed after
   the command. Every directory between a writable root and a protected path is bound onto
   itself first: a mount point cannot be renamed or removed (``EBUSY``), so no parent of a
   protected path can be moved aside and rebuilt with a planted copy inside;
4. ``denyRead`` hidden behind an unreadable (mode 000) empty file or directory, ``allowRead``
   bound back inside a hidden directory, then the paths ``Read(...)`` deny rules name hidden
   the same way (last: no ``allowRead`` re-opens what a deny rule closes).

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
from dataclasses import field
from pathlib import Path
from typing import Final

from permissions.safety import PROTECTED_FILES
from tools.records import datarecord
from tools.sandbox.gitguard import guard_git
from tools.sandbox.stubs import StubRegistry

__all__ = ["PROTECTED_SUBDIRS", "MountPlan", "MountRequest", "expand_patterns", "plan_mounts"]

# Directories read-only inside a writable directory (relative to it); .cargo, .yarn and .mvn
# are protected from the file tools but hold caches builds must write, so not here. What git
# reads (.git/config, .git/hooks, ...) is tools.sandbox.gitguard's.
PROTECTED_SUBDIRS: Final[tuple[str, ...]] = (
    ".claude",
    ".nerve",
    ".vscode",
    ".idea",
    ".husky",
    ".devcontainer",
    ".config/git",
    ".config/nerve",
)
# Missing ones that get a stub (a command could otherwise create them, then code would run).
_STUBBED: Final[tuple[str, ...]] = (".claude", ".nerve")
_EXEMPT: Final[tuple[str, ...]] = (".claude/worktrees", ".nerve/worktrees")
_MAX_MATCHES: Final = 1000


@datarecord(slots=True)
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


def _worktrees(rw: Sequence[Path]) -> list[Path]:
    """Nerve's own worktrees (``.claude/worktrees/*``): writable working trees of their own."""
    out: list[Path] = []
    for exempt in (r / e for r in rw for e in _EXEMPT):
        try:
            out += [Path(e.path) for e in os.scandir(exempt) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    return out


def _git_paths(
    rw: Sequence[Path],
    worktrees: Sequence[Path],
    stub_at: set[Path],
    home: Path,
    stubs: StubRegistry,
    plan: MountPlan,
    gitlinks: Iterable[Path],
) -> list[Path]:
    """What git reads, to keep read-only (stubs made and held for the missing ones)."""
    roots = [(root, root in stub_at) for root in (*rw, *worktrees)]
    guard = guard_git(roots, lambda p: _under(_real(p), rw), home, gitlinks)
    plan.notes += guard.notes
    out = list(guard.read_only)
    for path, content in guard.stubs.items():
        if stubs.acquire(path, content):
            plan.stubs.append(path)
            out.append(_real(path))
    return out


def _anchors(paths: Iterable[Path], roots: Sequence[Path], keep: set[Path]) -> list[Path]:
    """The directories strictly between each path and the deepest root above it (parents
    first), but not those in ``keep`` (bound otherwise)."""
    out: dict[Path, None] = {}
    for path in paths:
        above = [r for r in roots if path != r and path.is_relative_to(r)]
        if not above:
            continue
        root = max(above, key=lambda r: len(r.parts))
        for parent in reversed(path.parents):
            if parent.is_relative_to(root) and parent != root and parent not in keep:
                out[parent] = None
    return sorted(out, key=lambda p: len(p.parts))


def _bind_read_only(plan: MountPlan, paths: list[Path], roots: Sequence[Path]) -> None:
    """Pin the parents (bound onto themselves, still writable), then the paths read-only."""
    for anchor in _anchors(paths, roots, set(paths)):
        plan.args += ["--bind", str(anchor), str(anchor)]
    for path in sorted(paths, key=lambda p: len(p.parts)):
        plan.args += ["--ro-bind", str(path), str(path)]


def _hide(
    plan: MountPlan, paths: Iterable[Path], void: Callable[[], int], reopen: Sequence[Path] = ()
) -> list[Path]:
    """Hide each path; returns the directories, whose empty tmpfs the caller makes read-only
    once anything re-opened inside has its mount point (bubblewrap makes it in the tmpfs).
    A directory with something re-opened inside may be passed through, not listed (0111)."""
    dirs: list[Path] = []
    for path in paths:
        if path.is_dir():
            mode = "0111" if any(r.is_relative_to(path) for r in reopen) else "0000"
            plan.args += ["--perms", mode, "--tmpfs", str(path)]
            dirs.append(path)
        else:
            plan.args += ["--perms", "0000", "--ro-bind-data", str(void()), str(path)]
    return dirs


@datarecord(frozen=True, slots=True)
class MountRequest:
    """What one command may write and read (paths as given: only existing ones are mounted)."""

    writable: Sequence[Path]
    stub_roots: Sequence[Path]  # where a missing ``.claude``/``.nerve`` gets a stub
    deny_write: Iterable[str]
    deny_read: Iterable[str]
    allow_read: Iterable[str]
    # Extra directories to keep read-only (the home directory, for its rc files; Nerve's data
    # dir).
    protect: Sequence[Path]
    home: Path | None = None  # where the user's git config lives (None: the home directory)
    # The existing paths ``Read(...)`` deny rules name (``tools.sandbox.readrules``).
    deny_read_rules: Iterable[Path] = ()
    # The paths the git indexes record as submodules (``GitlinkWatch.checkouts``, for
    # ``tools.sandbox.gitguard``).
    gitlinks: Iterable[Path] = ()


def plan_mounts(
    request: MountRequest, *, void: Callable[[], int], stubs: StubRegistry
) -> MountPlan:
    """The mount arguments for ``request`` (see the module docstring). ``void()`` opens a
    descriptor that reads as empty (``/dev/null``) for each hidden file (bubblewrap closes it);
    ``stubs`` holds the stubs made for missing protected paths."""
    plan = MountPlan()
    rw = list(dict.fromkeys(_real(p) for p in request.writable if p.exists()))
    for path in rw:
        plan.args += ["--bind", str(path), str(path)]
    _bind_protected(plan, _read_only_paths(request, rw, stubs, plan), rw)
    _hide_denied_reads(plan, request, rw, void)
    return plan


def _read_only_paths(
    request: MountRequest, rw: Sequence[Path], stubs: StubRegistry, plan: MountPlan
) -> list[Path]:
    """What stays read-only inside the writable roots ``rw``: protected names in every root
    and in the extra protected places under them, ``denyWrite``, and what git reads."""
    ro: list[Path] = []
    protect = [_real(p) for p in request.protect if p.exists() and _under(_real(p), rw)]
    stub_at = {_real(p) for p in request.stub_roots}
    for root in dict.fromkeys([*rw, *protect]):
        ro += _protected_in(root, stubs if root in stub_at else None, plan)
    ro += [p for p in protect if p not in rw]
    ro += [p for p in (_real(p) for p in expand_patterns(request.deny_write)) if _under(p, rw)]
    worktrees = [_real(w) for w in _worktrees(rw)]
    for tree in worktrees:
        ro += _protected_in(tree, None, plan)
    home = request.home or Path.home()
    ro += _git_paths(rw, worktrees, stub_at, home, stubs, plan, request.gitlinks)
    return list(dict.fromkeys(_real(p) for p in ro))


def _bind_protected(plan: MountPlan, ro: list[Path], rw: Sequence[Path]) -> None:
    """Bind ``ro`` read-only. Nerve's worktrees are writable again inside a read-only
    .claude/.nerve, so what is protected inside them is bound after them."""
    exempt = [e for e in (r / name for r in rw for name in _EXEMPT) if e.is_dir()]
    _bind_read_only(plan, [p for p in ro if not _under(p, exempt)], rw)
    for path in exempt:
        plan.args += ["--bind", str(path), str(path)]
    _bind_read_only(plan, [p for p in ro if _under(p, exempt)], exempt)


def _hide_denied_reads(
    plan: MountPlan, request: MountRequest, rw: Sequence[Path], void: Callable[[], int]
) -> None:
    """Hide ``denyRead`` with ``allowRead`` bound back inside, then what deny rules name."""
    # a dangling link hides nothing, and a mount on its missing target would fail every command
    denied = dict.fromkeys(_real(p) for p in expand_patterns(request.deny_read))
    hidden = [p for p in denied if p.exists()]
    reopen = [p for p in (_real(p) for p in expand_patterns(request.allow_read)) if p not in hidden]
    reopen = [p for p in dict.fromkeys(reopen) if _under(p, hidden)]
    empty = _hide(plan, hidden, void, reopen)
    for path in reopen:
        plan.args += ["--bind" if _under(path, rw) else "--ro-bind", str(path), str(path)]
    ruled = dict.fromkeys(_real(p) for p in request.deny_read_rules if p.exists())
    empty += _hide(plan, ruled, void)
    for path in empty:
        plan.args += ["--remount-ro", str(path)]  # not recursive: re-opened mounts keep theirs
