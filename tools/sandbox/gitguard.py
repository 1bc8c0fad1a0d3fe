"""What git reads for configuration inside the writable set: kept read-only in the sandbox.

Git runs programs its configuration names (``core.fsmonitor``, hooks, ``core.pager``, aliases,
filter drivers), and the user's next ``git status`` — or the next Nerve start, whose system
prompt runs one — runs them *outside* the sandbox. So a sandboxed command must not be able to
change what git reads, for every repository git reaches from a writable directory:

* the ``.git`` directory of each writable root (and of Nerve's own worktrees), pinned in place:
  as a mount point it cannot be renamed or removed (``EBUSY``), so ``mv .git x`` followed by a
  fresh ``.git`` with its own config is impossible; a working directory without one gets an
  empty read-only stub, so none can be created (git treats an empty ``.git`` directory as "no
  repository here" and looks further up, as before);
* in each git directory: ``config``, ``commondir`` (names another git directory whose config
  and hooks git then uses), ``config.worktree``, ``hooks/``, ``info/``, and for linked
  worktrees ``worktrees/*/{gitdir,commondir,config.worktree}``; a missing ``commondir`` gets a
  stub holding ``.`` and a missing ``config.worktree`` an empty one where
  ``extensions.worktreeConfig`` is on (see ``tools.sandbox.stubs``);
* a ``.git`` *file* (the ``gitdir:`` link of a worktree or a submodule checkout), the git
  directory it names, and that one's common directory;
* submodules: every git directory under ``.git/modules`` (``git status`` enters each submodule
  and reads its config), and every checkout the index records as a submodule (a gitlink,
  mode 160000), whether ``.gitmodules`` lists it or not — an embedded repository added with
  ``git add sub`` is entered just the same: its ``.git`` (directory or file) pinned and its
  git directory's files as above. The gitlink paths come from ``tools.sandbox.gitlinks``
  (``GitlinkWatch.checkouts``: read from the index before the command, cached by its stat),
  beside those ``.gitmodules`` lists. A gitlink path with nothing checked out (no ``.git``
  there) is itself kept read-only, an empty stub directory where it is missing, so no
  repository can be put there: an empty ``.git`` stub, as for a working directory, would not
  do, since git stops with "'sub/.git' not recognized as a git repository" at a submodule
  path (``git status`` and ``git diff`` at the top fail);
* files the configuration pulls in: ``include.path``/``includeIf.*.path`` targets (a missing
  one gets an empty stub) and the ``core.hooksPath`` directory, from the repository's config
  and from the user's and the system's.

The directories between a writable root and each of these paths are pinned too (bound onto
themselves), so no parent can be renamed away and rebuilt (``tools.sandbox.mounts``).

What git still does inside the sandbox: status, diff, log, add, commit, branch, checkout,
merge, rebase, stash, gc. What fails: anything writing the config (``git config``, ``remote
add``, ``branch --set-upstream-to``, ``push -u``, ``submodule add/init``), ``git init`` at the
top of a working directory that has no repository (it runs outside the sandbox, with a
prompt), ``sparse-checkout`` (writes ``info/``), renaming a directory holding a submodule,
writing into a submodule path with nothing checked out (``submodule update --init`` cannot
run anyway: it writes the config), and ``git rev-parse --git-common-dir`` prints an absolute
path while the ``commondir`` stub stands.

Not covered by mounts (they cannot name a path at any depth): a *new* repository made in a
subdirectory. Git reads its config only when run inside that directory, or when the project's
index (writable: ``git add`` needs it) records it as a submodule — then ``git status`` at the
top enters it; ``tools.sandbox.gitlinks`` removes such an entry after the command, and also one
whose path got a repository where no mount could stop it (a gitlink whose parent directory is
missing too, or one recorded after a background task on that repository began). See
``docs/sandbox.md``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import field
from pathlib import Path
from typing import Final, Literal

from tools.records import datarecord

__all__ = ["GitGuard", "guard_git", "read_git_config"]

_MAX_GITDIRS: Final = 64  # git directories guarded per command (submodules included)
_MAX_GITLINKS: Final = 256  # gitlink paths from the index looked at per command
_MAX_WALK: Final = 4096  # entries looked at under one .git/modules
_MAX_DEPTH: Final = 4  # nesting of submodules and of config includes
_MAX_CONFIG_BYTES: Final = 1 << 20
_COMMONDIR_STUB: Final = b".\n"


@datarecord(slots=True)
class GitGuard:
    """Paths to keep read-only: ``read_only`` exist; ``stubs`` do not yet and must be made
    first (None: an empty directory; bytes: a file with that content)."""

    read_only: list[Path] = field(default_factory=list)
    stubs: dict[Path, bytes | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# -- a small reader of git's config syntax --------------------------------------------------

_HEADER = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\]')
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(=?)")
_UNESCAPE = re.compile(r"\\(.)")


def _value(lines: list[str], i: int, rest: str) -> tuple[str, int]:
    """The value starting at ``rest`` (quotes, escapes, comments, ``\\`` continuations)."""
    out: list[str] = []
    quoted = False
    pending = ""  # whitespace kept only if more value follows
    while True:
        j = 0
        while j < len(rest):
            c = rest[j]
            if c == "\\" and j + 1 < len(rest):
                out.append(
                    pending + {"n": "\n", "t": "\t", "b": "\b"}.get(rest[j + 1], rest[j + 1])
                )
                pending, j = "", j + 2
                continue
            if c == "\\":  # a continuation: the value goes on on the next line
                break
            if c == '"':
                quoted, j = not quoted, j + 1
                continue
            if not quoted and c in "#;":
                return "".join(out), i
            if not quoted and c.isspace():
                pending += c if out else ""
            else:
                out.append(pending + c)
                pending = ""
            j += 1
        if j < len(rest) and i < len(lines):
            rest, i = lines[i], i + 1
            continue
        return "".join(out), i


def read_git_config(path: Path) -> Iterator[tuple[str, str]]:
    """``(key, value)`` pairs of one config file, keys as git spells them canonically
    (``section.subsection.name``, section and name lower-cased); nothing if unreadable."""
    try:
        with path.open("rb") as fh:
            text = fh.read(_MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return
    lines = text.splitlines()
    section, i = "", 0
    while i < len(lines):
        line, i = lines[i], i + 1
        header = _HEADER.match(line)
        if header is not None:
            name, sub = header.group(1), header.group(2)
            if sub is not None:
                section = name.lower() + "." + _UNESCAPE.sub(r"\1", sub)
            elif "." in name:  # the old [section.subsection] form
                head, _, tail = name.partition(".")
                section = f"{head.lower()}.{tail.lower()}"
            else:
                section = name.lower()
            line = line[header.end() :]
        key = _KEY.match(line)
        if key is None or not section:
            continue
        if not key.group(2):
            yield f"{section}.{key.group(1).lower()}", "true"
            continue
        value, i = _value(lines, i, line[key.end() :])
        yield f"{section}.{key.group(1).lower()}", value


# -- the guard --------------------------------------------------------------------------------


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _expand(raw: str, base: Path, home: Path) -> Path:
    if raw == "~" or raw.startswith("~/"):
        return Path(str(home) + raw[1:])
    return _real(base / raw)


def _pointer(path: Path) -> str | None:
    """The target of a ``gitdir:`` file or a ``commondir`` file, as written."""
    try:
        with path.open("rb") as fh:
            text = fh.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if path.name == ".git":
        text = text[len("gitdir:") :].strip() if text.startswith("gitdir:") else ""
    return text or None


def _git_bool(value: str) -> bool:
    flag = value.strip().lower()
    if flag in ("true", "yes", "on"):
        return True
    try:
        return int(flag) != 0
    except ValueError:
        return False


def _is_gitdir(path: Path) -> bool:
    return (path / "HEAD").is_file()


class _Guard:
    def __init__(self, inside: Callable[[Path], bool], home: Path) -> None:
        self.inside = inside
        self.home = home
        self.out = GitGuard()
        self.seen: set[Path] = set()
        self.trees: set[Path] = set()  # working trees done (.gitmodules and the index agree)
        self.configs: set[tuple[Path, Path | None]] = set()

    def keep(self, path: Path, stub: bytes | Literal["dir"] | None = None) -> None:
        """``path`` read-only if it exists and lies in the writable set; if it is missing, a
        stub (``"dir"``: an empty directory; bytes: a file) unless ``stub`` is None."""
        if not self.inside(path):
            return
        if os.path.lexists(path):
            if os.path.exists(path):  # a dangling link cannot be mounted
                self.out.read_only.append(_real(path))
        elif stub is not None and path.parent.is_dir():
            self.out.stubs[path] = None if stub == "dir" else stub

    def config(self, path: Path, worktree: Path | None, depth: int = 0) -> bool:
        """Keep one config file and what it pulls in; True if it turns worktreeConfig on."""
        path = _real(path)
        if (path, worktree) in self.configs or depth > _MAX_DEPTH:
            return False
        self.configs.add((path, worktree))
        worktree_config = False
        for key, value in read_git_config(path):
            if key == "extensions.worktreeconfig":
                worktree_config = _git_bool(value)
            elif key == "core.hookspath" and value and worktree is not None:
                self.keep(_expand(value, worktree, self.home), stub="dir")
            elif key.startswith(("include.", "includeif.")) and key.endswith(".path") and value:
                target = _expand(value, path.parent, self.home)
                self.keep(target, stub=b"")
                worktree_config |= self.config(target, worktree, depth + 1)
        return worktree_config

    def gitdir(self, gitdir: Path, worktree: Path | None) -> None:
        gitdir = _real(gitdir)
        if gitdir in self.seen:
            return
        if not self.inside(gitdir):  # read-only already; what its config names may not be
            target = _pointer(gitdir / "commondir")
            self.config(
                _real(gitdir / target) / "config" if target else gitdir / "config", worktree
            )
            return
        if len(self.seen) >= _MAX_GITDIRS:
            self.out.notes.append(
                f"[sandbox] more than {_MAX_GITDIRS} git directories: {gitdir} is not protected"
            )
            return
        self.seen.add(gitdir)
        target = _pointer(gitdir / "commondir")
        common = _real(gitdir / target) if target else gitdir
        if common != gitdir:
            self.gitdir(common, None)
        worktree_config = self.config(common / "config", worktree)
        if common == gitdir:
            self.keep(gitdir / "config", stub=b"")
            self.keep(gitdir / "hooks", stub="dir")
            self.keep(gitdir / "info", stub="dir")
        self.keep(gitdir / "commondir", stub=_COMMONDIR_STUB)
        self.keep(gitdir / "config.worktree", stub=b"" if worktree_config else None)
        self.keep(gitdir / "gitdir")
        if common == gitdir:
            self.linked_worktrees(gitdir)
            self.submodule_gitdirs(gitdir / "modules")

    def linked_worktrees(self, gitdir: Path) -> None:
        try:
            entries = list(os.scandir(gitdir / "worktrees"))
        except OSError:
            return
        for entry in entries[:_MAX_GITDIRS]:
            if entry.is_dir(follow_symlinks=False):
                self.gitdir(Path(entry.path), None)

    def submodule_gitdirs(self, modules: Path) -> None:
        """Every git directory under ``.git/modules`` (a submodule's name may hold slashes,
        so they can sit several levels down); the whole tree read-only past the budget."""
        if not modules.is_dir():
            return
        pending, seen = [modules], 0
        while pending:
            try:
                entries = list(os.scandir(pending.pop()))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > _MAX_WALK:
                    self.out.notes.append(
                        f"[sandbox] {modules} is too large to search: kept read-only whole"
                    )
                    self.keep(modules)
                    return
                if not entry.is_dir(follow_symlinks=False):
                    continue
                if _is_gitdir(Path(entry.path)):
                    self.gitdir(Path(entry.path), None)
                else:
                    pending.append(Path(entry.path))

    def checkout(self, root: Path, *, stub: bool, depth: int = 0) -> None:
        """A working tree: its ``.git`` (directory, file, or missing) and its submodules."""
        if _real(root) in self.trees:
            return
        self.trees.add(_real(root))
        entry = root / ".git"
        if not os.path.lexists(entry):
            if stub:
                self.keep(entry, stub="dir")
            return
        if entry.is_dir():
            self.gitdir(entry, root)
        elif entry.is_file():
            self.keep(entry)
            target = _pointer(entry)
            if target:
                self.gitdir(root / target, root)
        if depth > 0:
            self.keep(root / ".gitmodules")  # the top one is a protected file already
        if depth < _MAX_DEPTH:
            for key, value in read_git_config(root / ".gitmodules"):
                sub = _real(root / value)
                if key.endswith(".path") and value and sub.is_relative_to(_real(root)):
                    self.checkout(sub, stub=False, depth=depth + 1)

    def gitlinks(self, paths: Iterable[Path]) -> None:
        """The paths the index records as submodules (see the module docstring)."""
        for count, path in enumerate(dict.fromkeys(paths)):
            if count >= _MAX_GITLINKS:
                self.out.notes.append(
                    f"[sandbox] more than {_MAX_GITLINKS} submodule paths in the git index: "
                    "the others are not protected (an entry whose path gets a repository is "
                    "removed from the index after the command)"
                )
                return
            # a symlink there is a typechange to git, which enters no repository through it
            if os.path.islink(path) or not self.inside(path):
                continue
            if os.path.lexists(path / ".git"):
                self.checkout(path, stub=False, depth=1)
            elif path.is_dir() or not os.path.lexists(path):
                # nothing checked out: the directory itself read-only (or an empty stub), so
                # no .git can be made inside; a stub .git would make git status fail
                self.keep(path, stub="dir")


def global_configs(home: Path) -> list[Path]:
    """The user's and the system's git config files (they may point into the project)."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return [Path("/etc/gitconfig"), Path(xdg) / "git" / "config", home / ".gitconfig"]


def guard_git(
    roots: list[tuple[Path, bool]],
    inside: Callable[[Path], bool],
    home: Path,
    gitlinks: Iterable[Path] = (),
) -> GitGuard:
    """The git paths to keep read-only for ``roots`` (working trees; True: stub a missing
    ``.git``); ``inside(path)``: is ``path`` in the writable set (only those need keeping);
    ``gitlinks``: the absolute paths the repositories' indexes record as submodules."""
    guard = _Guard(inside, home)
    for root, stub in roots:
        guard.checkout(root, stub=stub)
        for config in global_configs(home):
            guard.config(config, root)
    guard.gitlinks(gitlinks)
    guard.out.read_only = list(dict.fromkeys(guard.out.read_only))
    return guard.out
