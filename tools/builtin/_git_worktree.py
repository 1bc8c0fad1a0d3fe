"""Git worktrees under ``<repo>/.nerve/worktrees/<name>``, on branch ``worktree-<name>``.

Plain, synchronous git calls (each bounded in time), shared by EnterWorktree / ExitWorktree
(which run them in a thread) and by ``nerve --worktree NAME`` at start-up. ``WorktreeSession``
is what a session remembers about the worktree it is in: where it came from, so it can return.

``.nerve/worktrees/.gitignore`` holds ``*``, so the checkouts never show up in the main
repository's ``git status``; the user's local settings files are copied into a new worktree so
their own allow rules follow them there (those files are untracked, so the checkout lacks them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from config.safe_git import safe_git_argv
from tools.records import datarecord

__all__ = [
    "WORKTREES_DIR",
    "WorktreeChanges",
    "WorktreeError",
    "WorktreeSession",
    "branch_for",
    "create_or_reuse",
    "find_repo_root",
    "new_name",
    "remove_worktree",
    "validate_name",
    "worktree_changes",
]

WORKTREES_DIR = Path(".nerve") / "worktrees"
_LOCAL_SETTINGS = (Path(".nerve") / "settings.local.json", Path(".claude") / "settings.local.json")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
GIT_TIMEOUT_S = 60.0


class WorktreeError(Exception):
    """A worktree operation that cannot be done; the message says why, for the model or user."""


@datarecord(frozen=True, slots=True)
class WorktreeSession:
    """The worktree a session is in and the directory it left to get there."""

    name: str
    path: Path
    branch: str
    original_cwd: Path
    repo_root: Path
    base_commit: str
    created: bool  # made by this session (False: an existing worktree of that name, re-entered)


@datarecord(frozen=True, slots=True)
class WorktreeChanges:
    """What removing the worktree would lose: uncommitted files and commits found nowhere else."""

    files: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.files and not self.commits

    def describe(self, limit: int = 20) -> str:
        lines: list[str] = []
        if self.files:
            lines.append(f"{len(self.files)} uncommitted file(s):")
            lines += [f"  {f}" for f in self.files[:limit]]
            if len(self.files) > limit:
                lines.append(f"  … and {len(self.files) - limit} more")
        if self.commits:
            lines.append(f"{len(self.commits)} commit(s) not on the original checkout:")
            lines += [f"  {c}" for c in self.commits[:limit]]
            if len(self.commits) > limit:
                lines.append(f"  … and {len(self.commits) - limit} more")
        return "\n".join(lines)


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            # no fsmonitor, no hooks, no implicit bare repository: these runs follow a tool
            # call, and the repository's config or hooks directory may be the model's (safe_git)
            safe_git_argv(*args, cwd=cwd),
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise WorktreeError("git is not installed (no `git` on PATH)") from exc
    except subprocess.TimeoutExpired as exc:
        raise WorktreeError(f"git {args[0]} did not finish within {GIT_TIMEOUT_S:g} s") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise WorktreeError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else 'error'}")
    return proc


def validate_name(name: str) -> str | None:
    """None when ``name`` is a usable worktree name, else what is wrong with it."""
    if not _NAME.match(name) or ".." in name or name.endswith((".lock", ".")):
        return (
            f"invalid worktree name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return None


def new_name() -> str:
    import secrets

    return f"wt-{secrets.token_hex(3)}"


def branch_for(name: str) -> str:
    return f"worktree-{name}"


def find_repo_root(cwd: Path) -> Path | None:
    """The top of the git checkout containing ``cwd`` (a linked worktree's own top), or None."""
    proc = _git(cwd, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return Path(proc.stdout.strip()).resolve()


def _registered(root: Path) -> set[Path]:
    out = _git(root, "worktree", "list", "--porcelain").stdout
    return {
        Path(line[len("worktree ") :]).resolve()
        for line in out.splitlines()
        if line.startswith("worktree ")
    }


def _branch_exists(root: Path, branch: str) -> bool:
    proc = _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
    return proc.returncode == 0


def _head(cwd: Path) -> str:
    proc = _git(cwd, "rev-parse", "HEAD", check=False)
    if proc.returncode != 0:
        raise WorktreeError("the repository has no commits yet; commit once before a worktree")
    return proc.stdout.strip()


def _prepare_dir(root: Path) -> Path:
    base = root / WORKTREES_DIR
    base.mkdir(parents=True, exist_ok=True)
    ignore = base / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Nerve's worktrees: never part of the repository\n*\n", "utf-8")
    return base


def _copy_local_settings(root: Path, path: Path) -> None:
    for rel in _LOCAL_SETTINGS:
        src, dst = root / rel, path / rel
        if src.is_file() and not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def create_or_reuse(cwd: Path, name: str) -> WorktreeSession:
    """Create ``.nerve/worktrees/<name>`` on a new branch from HEAD, or re-enter it if it is
    already a worktree of this repository. Raises WorktreeError with the reason."""
    if (problem := validate_name(name)) is not None:
        raise WorktreeError(problem)
    root = find_repo_root(cwd)
    if root is None:
        raise WorktreeError(f"{cwd} is not inside a git repository; a worktree needs one")
    path = root / WORKTREES_DIR / name
    branch = branch_for(name)
    if path.exists():
        if path.resolve() not in _registered(root):
            raise WorktreeError(f"{path} exists but is not a git worktree; choose another name")
        return WorktreeSession(name, path, branch, cwd, root, _head(path), created=False)
    base = _head(root)
    _prepare_dir(root)
    if _branch_exists(root, branch):
        # The branch outlived an earlier worktree ("keep", then removed by hand): attach it
        # again rather than fail, so no earlier work is hidden.
        _git(root, "worktree", "add", str(path), branch)
    else:
        _git(root, "worktree", "add", "-b", branch, str(path), base)
    _copy_local_settings(root, path)
    return WorktreeSession(name, path, branch, cwd, root, _head(path), created=True)


def worktree_changes(session: WorktreeSession) -> WorktreeChanges:
    """Uncommitted files (untracked included) and commits not reachable from the original
    checkout's HEAD: what ``remove`` would destroy."""
    if not session.path.is_dir():
        return WorktreeChanges()
    status = _git(session.path, "status", "--porcelain=v1", "--untracked-files=all").stdout
    files = tuple(line[3:] for line in status.splitlines() if len(line) > 3)
    original = _git(session.repo_root, "rev-parse", "HEAD", check=False).stdout.strip()
    args = ["log", "--format=%h %s", "HEAD"] + (["--not", original] if original else [])
    commits = tuple(_git(session.path, *args).stdout.splitlines())
    return WorktreeChanges(files, commits)


def remove_worktree(session: WorktreeSession, *, force: bool) -> None:
    """Delete the checkout and its branch. Without ``force`` git itself refuses a dirty tree."""
    if session.path.exists():
        args = ["worktree", "remove", *(["--force", "--force"] if force else []), str(session.path)]
        _git(session.repo_root, *args)
    _git(session.repo_root, "worktree", "prune", check=False)
    if _branch_exists(session.repo_root, session.branch):
        _git(session.repo_root, "branch", "-D", session.branch)
