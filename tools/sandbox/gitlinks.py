"""Submodule entries a sandboxed command adds to the git index: removed again after it.

The sandbox keeps what git reads for configuration read-only (``tools.sandbox.gitguard``), but
the index must stay writable (``git add``, ``git commit``), and no mount can name a path at any
depth. So a command can make a new repository in a subdirectory, give it a ``core.fsmonitor``,
and record it in the project's index as a submodule (``git update-index --add --cacheinfo
160000,SHA,sub`` or ``git add sub``): the user's next plain ``git status`` at the top, outside
the sandbox, enters ``sub`` and runs that program. The same holds for the index of a submodule
already there (``git status`` recurses).

This module closes that after the fact. Around each sandboxed command (foreground, and a
background task from its start to its end) :class:`GitlinkGuard` remembers the gitlinks (mode
160000 entries) of the repositories of the working directory and the session's working
directories, their submodules included, with what stood at each path (the ``.git`` entry's
identity); when the command ends, every gitlink it added, or whose path now holds another
repository, is removed from the index again with Nerve's own pinned git (``safe_git_argv``,
outside the sandbox), and the result says so. An entry whose path holds no repository is kept:
git enters nothing there (``git checkout`` of a branch with a submodule not checked out adds
such entries), and a repository put there later is one "whose path now holds another".

What the index records *before* the command is also guarded while it runs: ``begin`` hands
the gitlink paths it read (``GitlinkWatch.checkouts``, no git run of its own) to the sandbox's
mounts, where ``tools.sandbox.gitguard`` keeps each checkout's ``.git`` and git configuration
read-only, ``.gitmodules`` or not, and a path with nothing checked out read-only whole (a
missing one stubbed), so no repository can be put there. What is left to the removal after
the command: entries the command adds, and a repository put at a known path whose parent
directory is missing too (no stub can be made there).

No legitimate work is lost: ``git submodule add`` and ``submodule update --init`` cannot
complete in the sandbox anyway (they must write ``.git/config``, read-only there; ``submodule
add`` clones, fails to record the URL, exits 0 and leaves a half-made entry, which this removes
too); a submodule's new commit (``git add sub`` after committing inside it) keeps its entry.

Cost: one ``stat`` of each index before and after, plus one ``lstat`` per gitlink; git runs only
when an index changed, and what it read is cached by the index's stat (device, inode, size,
mtime and ctime: ctime cannot be set back by ``touch``; an index written in the last two seconds
is not cached, as a second write in the same clock tick would not show).

While a sandboxed background task runs, the remembered gitlinks (and so the paths the mounts
guard) stay those from before it started: whatever is added to that index meanwhile is removed
when the task ends, or earlier, when any other sandboxed command on that repository ends (its
result then says "the command or another sandboxed command running meanwhile"). A submodule
the user adds outside the sandbox while such a task runs is removed too (the message says
so): Nerve cannot tell who wrote the index.
Between the addition and that moment, the user's own ``git status`` would still run the planted
program.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import stat
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Final

from config.safe_git import safe_git_argv
from permissions.bash.git import discover_repository, trusted_gitdir
from tools.records import datarecord
from tools.terminal_text import reveal

__all__ = ["GitlinkGuard", "GitlinkWatch", "begin_watch", "end_watch"]

_GITLINK: Final = b"160000"
_MAX_REPOS: Final = 64  # repositories watched per working directory, submodules included
_MAX_DEPTH: Final = 4  # nesting of submodules followed
_RACY_NS: Final = 2_000_000_000  # an index this recently written is not cached
_GIT_TIMEOUT_S: Final = 30.0
_LOCK_RETRIES: Final = 10  # index.lock held by another git (a background task's): wait a bit

StatKey = tuple[int, int, int, int, int]
Identity = tuple[int, ...] | None  # what stands at a gitlink's path (its ``.git`` entry)


def _stat_key(path: Path) -> StatKey | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _racy(key: StatKey) -> bool:
    return time.time_ns() - max(key[3], key[4]) < _RACY_NS


def _identity(top: Path, rel: str) -> Identity:
    """The ``.git`` entry at a gitlink's path: a directory by its inode (git writes inside it
    on every commit there, so no times), a ``gitdir:`` file also by its ctime and size (it is
    a different repository once rewritten); None when nothing is there (not checked out)."""
    try:
        st = os.lstat(top / rel / ".git")
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return (stat.S_IFDIR, st.st_dev, st.st_ino)
    return (stat.S_IFMT(st.st_mode), st.st_dev, st.st_ino, st.st_size, st.st_ctime_ns)


@datarecord(frozen=True, slots=True)
class _Repo:
    top: Path  # the working tree
    gitdir: Path  # its own git directory (``.git/worktrees/X`` for a linked worktree)

    @property
    def index(self) -> Path:
        return self.gitdir / "index"


def _repository(start: Path, *, exact: bool = False) -> _Repo | None:
    """The session's kind of repository git finds from ``start`` (``permissions.bash.git``'s
    discovery: a ``.git`` directory or file whose config is a protected path), or None;
    ``exact``: only one whose working tree is ``start`` itself (a submodule's checkout)."""
    found = discover_repository(str(start))
    if found is None or found.how not in ("dir", "file") or not trusted_gitdir(found):
        return None
    if exact and found.where != os.path.realpath(start):
        return None
    return _Repo(Path(found.where), Path(found.gitdir))


class _GitError(Exception):
    pass


def _git(repo: _Repo, *args: str) -> bytes:
    """Nerve's own git on exactly this repository: the pinned configuration (no fsmonitor, no
    hooks, no pager: the repository's config cannot make it run anything) and none of Nerve's
    own ``GIT_*`` variables (a ``GIT_INDEX_FILE`` would point it at another index)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_DIR=str(repo.gitdir), GIT_WORK_TREE=str(repo.top))
    try:
        proc = subprocess.run(
            safe_git_argv(*args, cwd=repo.top),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise _GitError(str(exc)) from exc
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _GitError(lines[-1] if lines else f"git exited with {proc.returncode}")
    return proc.stdout


def _parse_gitlinks(out: bytes) -> dict[str, str]:
    """``ls-files -s -z`` / ``ls-tree -z`` output: the mode 160000 entries, path -> object."""
    links: dict[str, str] = {}
    for record in out.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        fields = meta.split()
        if path and fields and fields[0] == _GITLINK:
            links[os.fsdecode(path)] = fields[1].decode("ascii", "replace")
    return links


@datarecord(slots=True)
class _State:
    """One repository as it was before the command: its gitlinks and what stood at each."""

    repo: _Repo
    links: dict[str, Identity] | None  # path -> what stood there; None: index unreadable
    submodule: bool


@datarecord(slots=True)
class _Tree:
    """The repositories reached from one working directory's repository, remembered while
    any sandboxed command on it runs (``active``); ``serial`` counts the commands begun."""

    states: list[_State]
    active: int = 0
    serial: int = 0


@datarecord(slots=True)
class GitlinkWatch:
    """One command's share: the trees it is checked against (see :meth:`GitlinkGuard.end`)."""

    roots: list[tuple[Path, int, bool]] = field(default_factory=list)  # index, serial, shared
    notes: list[str] = field(default_factory=list)
    # every gitlink path of those trees, absolute: the mounts guard what stands there
    # (tools.sandbox.gitguard), with nothing read again
    checkouts: list[Path] = field(default_factory=list)
    done: bool = False


class GitlinkGuard:
    """The gitlinks of the session's repositories around sandboxed commands (see the module
    docstring). One per sandbox session; ``begin`` and ``end`` run git and belong on a worker
    thread (``begin_watch``/``end_watch``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[StatKey, dict[str, str]]] = {}
        self._trees: dict[Path, _Tree] = {}

    def _links(self, repo: _Repo) -> dict[str, str]:
        """The index's gitlinks; git runs only when the index's stat differs from the cached
        one. No index file: none (a repository with nothing added yet). Raises _GitError."""
        key = _stat_key(repo.index)
        if key is None:
            return {}
        cached = self._cache.get(repo.index)
        if cached is not None and cached[0] == key:
            return cached[1]
        links = _parse_gitlinks(_git(repo, "ls-files", "--stage", "-z"))
        if _stat_key(repo.index) == key and not _racy(key):
            self._cache[repo.index] = (key, links)
        else:
            self._cache.pop(repo.index, None)
        return links

    def _snapshot(self, root: _Repo, notes: list[str]) -> list[_State]:
        """``root`` and the submodules checked out below it, breadth first, bounded."""
        states: list[_State] = []
        seen: set[Path] = set()
        pending = [(root, 0)]
        while pending and len(states) < _MAX_REPOS:
            repo, depth = pending.pop(0)
            if repo.index in seen:
                continue
            seen.add(repo.index)
            try:
                links = self._links(repo)
            except _GitError as exc:
                notes.append(
                    f"[sandbox] could not read the git index of {reveal(str(repo.top))} ({exc}): "
                    "submodule entries a command adds there are not checked"
                )
                states.append(_State(repo, None, depth > 0))
                continue
            states.append(_State(repo, {p: _identity(repo.top, p) for p in links}, depth > 0))
            if depth >= _MAX_DEPTH:
                continue
            for rel in links:
                sub = _repository(repo.top / rel, exact=True)
                if sub is not None:
                    pending.append((sub, depth + 1))
        if pending:
            notes.append(
                f"[sandbox] more than {_MAX_REPOS} repositories below {reveal(str(root.top))}: "
                "submodule entries a command adds to the others' indexes are not checked"
            )
        return states

    def begin(self, dirs: Sequence[Path]) -> GitlinkWatch:
        """Before a sandboxed command that starts in ``dirs[0]`` with ``dirs[1:]`` writable:
        remember the gitlinks of their repositories (unless a command still running on one
        already did: then those stay)."""
        watch = GitlinkWatch()
        with self._lock:
            roots: dict[Path, _Repo] = {}
            for d in dirs:
                repo = _repository(d)
                if repo is not None:
                    roots.setdefault(repo.index, repo)
            for index, repo in roots.items():
                tree = self._trees.get(index)
                if tree is None:
                    tree = self._trees[index] = _Tree(self._snapshot(repo, watch.notes))
                tree.active += 1
                tree.serial += 1
                watch.roots.append((index, tree.serial, tree.active > 1))
                watch.checkouts += [
                    state.repo.top / rel for state in tree.states for rel in state.links or ()
                ]
        return watch

    def end(
        self, watch: GitlinkWatch, *, who: str = "the command", check: bool = True
    ) -> list[str]:
        """After the command (``who`` in the message): remove what it added; the notices for
        its result. ``check=False``: only release (the command never ran). Idempotent."""
        with self._lock:
            if watch.done:
                return []
            watch.done = True
            notes = list(watch.notes)
            for index, serial, shared in watch.roots:
                tree = self._trees.get(index)
                if tree is None:
                    continue
                if check:
                    # another sandboxed command ran on this repository meanwhile: either may
                    # have written the index
                    alongside = shared or tree.serial != serial
                    by = (
                        f"{who} or another sandboxed command running meanwhile"
                        if alongside
                        else who
                    )
                    for state in tree.states:
                        try:
                            notes += self._check(state, by)
                        except OSError as exc:  # never break the task's end for it
                            notes.append(f"[sandbox] submodule entries not checked: {exc}")
                tree.active -= 1
                if tree.active <= 0:
                    del self._trees[index]
            return notes

    def _check(self, state: _State, who: str) -> list[str]:
        if state.links is None:
            return []
        repo = state.repo
        try:
            current = self._links(repo)
        except _GitError as exc:
            return [
                f"[sandbox] could not read the git index of {reveal(str(repo.top))} after the "
                f"command ({exc}): a submodule entry it added there is not checked"
            ]
        # Only an entry with a repository at its path matters: git enters no other. One whose
        # path holds nothing is kept (``git checkout`` of a branch that has a submodule adds
        # one, not checked out): the next command starts with it, and a repository put there
        # later shows as a new identity.
        added: list[str] = []
        moved: list[str] = []
        for path in current:
            now = _identity(repo.top, path)
            if now is None:
                continue
            if path not in state.links:
                added.append(path)
            elif now != state.links[path]:
                moved.append(path)
        if not added and not moved:
            return []
        return [_removal(state, added, moved, who)]


def _remove(repo: _Repo, paths: list[str]) -> str | None:
    """Drop ``paths`` from the index (``--force-remove``: whatever is on disk; it reads no file,
    so no filter runs). An error message, or None."""
    for attempt in range(_LOCK_RETRIES):
        try:
            _git(repo, "update-index", "--force-remove", "--", *paths)
            return None
        except _GitError as exc:
            if "index.lock" not in str(exc) or attempt == _LOCK_RETRIES - 1:
                return str(exc)
            time.sleep(0.1)
    return None  # pragma: no cover


def _committed(repo: _Repo, paths: list[str]) -> list[str]:
    """Which of ``paths`` HEAD records as gitlinks (checking HEAD out again restores them)."""
    try:
        return list(_parse_gitlinks(_git(repo, "ls-tree", "-z", "HEAD", "--", *paths)))
    except _GitError:
        return []  # no commit yet, or HEAD unreadable: nothing to add to the message


def _names(paths: list[str]) -> str:
    shown = [reveal(p) + "/" for p in paths]
    return ("entry " if len(shown) == 1 else "entries ") + ", ".join(shown)


def _removal(state: _State, added: list[str], moved: list[str], who: str) -> str:
    """Remove what was added or replaced; the plain account for the model and the user."""
    repo = state.repo
    paths = [*added, *moved]
    where = f" of the submodule at {reveal(str(repo.top))}" if state.submodule else ""
    error = _remove(repo, paths)
    if error is not None:
        return (
            f"[sandbox] {who} registered the submodule {_names(paths)} in the git index{where}, "
            f"and Nerve could not remove it ({reveal(error)}). Until `git update-index "
            f"--force-remove -- {reveal(shlex.join(paths))}` in {reveal(str(repo.top))} has "
            "removed it, do not run git there outside the sandbox: git would enter that "
            "repository and run what its config names."
        )
    parts: list[str] = []
    if added:
        parts.append(
            f"Nerve removed the submodule {_names(added)} that {who} added to the git index{where}"
        )
    if moved:
        parts.append(
            f"Nerve removed the submodule {_names(moved)} from the git index{where}: {who} put "
            f"another repository at {'that path' if len(moved) == 1 else 'those paths'}"
        )
    text = (
        "[sandbox] "
        + "; ".join(parts)
        + ": a command in the sandbox may not register a repository that git outside the "
        "sandbox would enter (its config could run programs). The files on disk are untouched. "
        "Add submodules outside the sandbox (dangerouslyDisableSandbox), with approval; `git "
        "submodule add` cannot complete in the sandbox anyway (it must write .git/config, "
        "which is read-only there)."
    )
    committed = _committed(repo, added)
    if committed:
        text += (
            f" The last commit records {', '.join(reveal(p) + '/' for p in committed)} too: "
            "resetting to or checking out that commit brings the entry back."
        )
    return text


# -- the async side: begin before the command, end after it, whatever happens ---------------

_pending: set[asyncio.Future[list[str]]] = set()  # releases of cancelled begins, kept alive


async def begin_watch(guard: GitlinkGuard, dirs: Sequence[Path]) -> GitlinkWatch:
    """``guard.begin`` off the event loop. If the caller is cancelled meanwhile, the watch is
    released once ``begin`` has finished (else the tree would stay remembered for good)."""
    job = asyncio.ensure_future(asyncio.to_thread(guard.begin, list(dirs)))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:

        def release(done: asyncio.Future[GitlinkWatch]) -> None:
            if not done.cancelled() and done.exception() is None:
                later = asyncio.ensure_future(
                    asyncio.to_thread(guard.end, done.result(), check=False)
                )
                _pending.add(later)
                later.add_done_callback(_pending.discard)

        job.add_done_callback(release)
        raise


async def end_watch(
    guard: GitlinkGuard, watch: GitlinkWatch, who: str = "the command"
) -> list[str]:
    """``guard.end`` off the event loop; it runs to completion even if the caller is cancelled
    (the notices are lost then, the removal is not)."""
    job = asyncio.ensure_future(asyncio.to_thread(guard.end, watch, who=who))
    return await asyncio.shield(job)
