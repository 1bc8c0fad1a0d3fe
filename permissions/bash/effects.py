"""What the commands of one script write, where, and the safety checks that follow from it.

``WalkState`` follows the working directory through ``cd`` while the commands are judged in
order: it resolves write targets (redirects and the operands of file-writing programs), raises
the protected-path, critical-rm and git-configuration checks, and says whether acceptEdits may
run the command.

The git check: a repository's config can name programs git runs by itself, so a git command
asks unless the repository it would use (git's own discovery from where it runs: the session's
directory, after ``cd``, after each ``-C``) is the session's own, whose config is a protected
path, or no repository at all. The environment (``GIT_*``, ``HOME``, ``XDG_CONFIG_HOME``, ...)
and ``-c`` options can point git at other configuration, and a write in the same command
could plant a repository where git looks for one: each of these asks too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from permissions.bash.analysis import CommandFacts, sed_in_place_operands
from permissions.bash.git import (
    GitGlobals,
    Repository,
    common_gitdir,
    discover_repository,
    git_env_var,
    parse_git_globals,
    trusted_gitdir,
)
from permissions.bash.paths import is_critical_rm_target, is_inside, is_protected, resolve_path
from permissions.bash.wrappers import basename, strip_allow_wrapper
from permissions.types import PermissionContext, SafetyCheck

__all__ = ["WalkState", "write_words"]

_EDIT_PROGRAMS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
_WRITERS = _EDIT_PROGRAMS | {"tee", "ln", "chmod", "chown", "chgrp", "truncate", "install", "dd"}
_VALUE_FLAGS: dict[str, frozenset[str]] = {
    "touch": frozenset({"-d", "-r", "-t", "--date", "--reference"}),
    "mkdir": frozenset({"-m", "--mode", "--context"}),
    "cp": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "mv": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "ln": frozenset({"-t", "-S", "--target-directory", "--suffix"}),
    "install": frozenset({"-m", "-o", "-g", "-t", "-S", "--mode", "--owner", "--group"}),
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
}


def _operands(prog: str, args: Sequence[str]) -> list[str] | None:
    """Path operands of a file-writing command (None when it cannot be modelled)."""
    if prog == "sed":
        return sed_in_place_operands(list(args))
    if prog == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    values = _VALUE_FLAGS.get(prog, frozenset())
    out: list[str] = []
    skip = False
    end = False
    for a in args:
        if skip:
            skip = False
            if prog in ("cp", "mv", "ln", "install"):
                out.append(a)  # -t DIR is the destination
            continue
        if end or not a.startswith("-") or a == "-":
            out.append(a)
        elif a == "--":
            end = True
        elif a in values:
            skip = True
    if prog in ("chmod", "chown", "chgrp") and out:
        out = out[1:]
    return out


def write_words(f: CommandFacts) -> tuple[list[str | None], bool]:
    """The paths ``f`` writes as written (None: unknown), and whether the writing program's
    operands could be modelled."""
    targets: list[str | None] = list(f.writes)
    core = f.core
    if core and core[0] in _WRITERS:
        edit_words = _operands(core[0], core[1:])
        if edit_words is None:
            return targets, False
        targets.extend(edit_words if f.known else [None])
    return targets, True


@dataclass(slots=True)
class _GitRun:
    """A git command seen through wrappers: the environment names set for it, ``env -C``
    directories, git's own arguments (``known``: literal or not), and what could not be
    modelled (``env -S ...``)."""

    env_names: list[str]
    chdirs: list[str | None] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    known: list[bool] = field(default_factory=list)
    unresolved: str = ""
    # every word printable: when one is not, the analysis's own "control characters" problem
    # asks (whatever the rules) and names the real trouble better than "not known statically"
    printable: bool = True
    via_xargs: bool = False  # stdin words follow the written ones (`xargs git` gets its options)


def _git_run(f: CommandFacts) -> _GitRun | None:
    """The git command ``f`` runs, seen through transparent wrappers and ``env``, or None."""
    cmd = f.cmd
    if cmd.kind != "command" or "git" not in cmd.text:
        return None  # the common case, without a look at the words
    argv = f.argv
    known = [w.known for w in cmd.words]
    run = _GitRun([n for n, _ in cmd.assignments])
    run.printable = all(w.text.isprintable() for w in cmd.words)
    i = 0
    while i < len(argv):
        head = basename(argv[i])
        if head == "git" and known[i]:
            run.args, run.known = argv[i + 1 :], known[i + 1 :]
            return run
        if head == "env" and known[i]:
            nxt = _skip_env(argv, known, i + 1, run)
            if nxt < 0:
                run.unresolved = "env with options the analysis does not model"
                return run if any("git" in a for a in argv[i + 1 :]) else None
            i = nxt
            continue
        rest = strip_allow_wrapper(argv[i:])
        if rest is None:
            return None  # not git, or a wrapper that is never read-only (sudo, bash -c, ...)
        run.via_xargs = run.via_xargs or head == "xargs"
        i = len(argv) - len(rest)
    return None


_ENV_FLAGS = frozenset({"-i", "--ignore-environment", "-", "-0", "--null", "-v", "--debug"})


def _skip_env(argv: Sequence[str], known: Sequence[bool], i: int, run: _GitRun) -> int:
    """Index of the command ``env`` runs, its assignments and ``-C`` noted in ``run``; -1 for
    an option this does not model."""
    while i < len(argv):
        a = argv[i]
        if not known[i]:
            return -1
        if a in _ENV_FLAGS or a == "--":
            i += 1
        elif a in ("-u", "--unset"):
            i += 2
        elif a.startswith("--unset=") or (a.startswith("-u") and not a.startswith("--")):
            i += 1
        elif a in ("-C", "--chdir"):
            run.chdirs.append(argv[i + 1] if i + 1 < len(argv) and known[i + 1] else None)
            i += 2
        elif a.startswith(("--chdir=", "-C")):
            run.chdirs.append(a.split("=", 1)[1] if a.startswith("--") else a[2:])
            i += 1
        elif a.startswith("-"):
            return -1
        elif "=" in a and not a.startswith("="):
            run.env_names.append(a.split("=", 1)[0])
            i += 1
        else:
            return i
    return i


# What git's discovery looks at in each directory it passes (git's is_git_directory and the
# `.git` entry); a write naming one of them may plant a repository.
_DISCOVERY_NAMES = frozenset({".git", "HEAD", "refs", "objects"})


def _plants(target: str | None, levels: Sequence[str]) -> bool:
    """Could writing ``target`` (None: unknown) change the repository a git command whose
    discovery passes ``levels`` (nearest first) would find? Writing into one of those
    directories an entry discovery looks at, or writing the directory where git runs (or one
    of its parents: ``mv planted sub``, ``cp -r planted/. sub``) whole. An unknown target
    (``touch $x``) is left to the rest of the analysis: such a write is never auto-allowed (not
    read-only, not an acceptEdits edit), and its "cannot analyse" reason is the better one."""
    if target is None or not levels:
        return False
    real = os.path.realpath(target)
    first = levels[0]
    if first == real or first.startswith(real.rstrip("/") + "/"):
        return True
    for level in levels:
        prefix = level.rstrip("/") + "/"
        if real.startswith(prefix) and real[len(prefix) :].split("/", 1)[0] in _DISCOVERY_NAMES:
            return True
    return False


def _plant_reason(target: str | None, show: Callable[[str], str]) -> str:
    return (
        f"git runs in the same command as a write to {show(target or '?')}, which could plant a"
        " repository where git looks for one"
    )


def _foreign_reason(shown: str, repo: Repository, show: Callable[[str], str]) -> str:
    """The message for a git command that would use a repository other than the session's."""
    where = show(repo.where) or "."
    if repo.how == "bare":
        return (
            f"{shown} would use {where} as a bare repository (its config, files the model could"
            " write, can make git run code)"
        )
    if repo.how == "file":
        return (
            f"{shown} follows the .git file in {where} to another repository ({show(repo.gitdir)})"
        )
    if repo.how == "broken":
        return f"{shown}: cannot tell which repository git would use ({where}/.git)"
    return f"{shown} reads the configuration of another repository ({show(repo.gitdir)})"


class WalkState:
    """Mutable bookkeeping of one assessment walk."""

    def __init__(self, ctx: PermissionContext) -> None:
        self.home = str(ctx.home)
        self.start = str(ctx.cwd)
        self.cwd: str | None = self.start
        self.dirs = [str(d) for d in ctx.working_dirs]
        self.safety: list[SafetyCheck] = []
        self.accept_ok = True
        # the git checks: GIT_*/HOME/... set by earlier commands, whether git ran, what the
        # commands wrote, the directories each git command's discovery looks at
        self.git_env: list[str] = []
        self.git_seen = False
        self.written: list[str | None] = []
        self.git_levels: list[list[str]] = []
        self.session_repo: Repository | None = None
        self.session_known = False
        self.session_levels: list[str] = []
        self.session_common: str | None = None

    def write_targets(
        self, f: CommandFacts, targets: list[str | None], modelled: bool
    ) -> list[str | None]:
        """Judge the paths ``f`` writes (``targets``, ``modelled``: :func:`write_words`);
        returns them resolved (None: unknown)."""
        core = f.core
        if not modelled and core and core[0] != "sed":
            self.accept_ok = False
        resolved: list[str | None] = []
        for t in targets:
            r = resolve_path(t, self.cwd, self.home) if t is not None else None
            if r is not None and is_protected(r):
                self.safety.append(
                    SafetyCheck(f"writes to a protected path: {r}", classifier_approvable=True)
                )
            resolved.append(r)
        if resolved:
            self._note_written(resolved)
        if core and core[0] in ("rm", "rmdir"):
            self.check_rm(f, core)
        return resolved

    def check_rm(self, f: CommandFacts, core: Sequence[str]) -> None:
        words = f.cmd.words[len(f.cmd.words) - len(core) :]
        recursive = any(
            a in ("--recursive",)
            or (a.startswith("-") and not a.startswith("--") and "r" in a.lower())
            for a in core[1:]
        )
        for w in words[1:]:
            if w.known and w.value is not None and w.value.startswith("-") and w.value != "-":
                continue
            if is_critical_rm_target(w.text, w.value, w.glob, recursive, self.cwd, self.home):
                self.safety.append(
                    SafetyCheck(f"rm of a critical path: {w.text}", classifier_approvable=False)
                )

    def check_git_after_cd(self, f: CommandFacts) -> None:
        """The git-configuration checks for ``f`` (see the module docstring); and git after a
        cd into another directory always asks, as in Claude Code (a repository the cd reaches
        may be planted by this very command, e.g. by a program the analysis cannot model)."""
        self._note_git_env(f)
        run = _git_run(f)
        if run is None:
            return
        self.git_seen = True
        reason = self._git_reason(run)
        if reason is not None:
            self.safety.append(SafetyCheck(reason, classifier_approvable=True))
        if self.cwd != self.start:
            self.safety.append(
                SafetyCheck(
                    "git runs after cd into another directory (its repository config could run"
                    " code)",
                    classifier_approvable=True,
                )
            )

    def _note_git_env(self, f: CommandFacts) -> None:
        """``HOME=.;`` / ``export GIT_DIR=x`` before (or, in a loop, after) a git command of the
        same script changes what git reads: remember it, and ask if git already ran."""
        if f.cmd.kind not in ("assignment", "declaration"):
            return
        names = [n for n, _ in f.cmd.assignments if git_env_var(n)]
        if not names:
            return
        self.git_env.extend(names)
        if self.git_seen:
            self.safety.append(
                SafetyCheck(
                    f"{names[0]} is set in a command that runs git (git takes its repository, "
                    "configuration or helper programs from it)",
                    classifier_approvable=True,
                )
            )

    def _git_reason(self, run: _GitRun) -> str | None:
        """Why ``run`` could take configuration from a path the model could write, or None."""
        names = [n for n in (*run.env_names, *self.git_env) if git_env_var(n)]
        if names:
            return (
                f"git runs with {names[0]} set (git takes its repository, configuration or "
                "helper programs from it)"
            )
        if run.unresolved:
            return (
                f"cannot tell how git is run ({run.unresolved}): its configuration could run code"
            )
        g = parse_git_globals(run.args, run.known)
        if run.via_xargs and g.subcommand is None:
            g.unknown = True  # `... | xargs git`: the options come from stdin
        if g.unknown and run.printable:
            return "a git option is not known statically: cannot tell which repository git uses"
        if g.config:
            return (
                f"git {g.config[0]} sets configuration for this run (a value such as "
                "core.fsmonitor or core.pager names a program git runs)"
            )
        if g.exec_path is not None:
            return f"git --exec-path={g.exec_path} runs git's programs from another directory"
        if g.work_tree is not None:
            return f"git --work-tree={g.work_tree} runs git on another work tree"
        return self._git_repository_reason(run, g)

    def _git_repository_reason(self, run: _GitRun, g: GitGlobals) -> str | None:
        """Why the repository ``run`` uses (where its ``-C`` options lead, then its
        ``--git-dir`` or the one git discovers there) could be one the model planted."""
        if self.cwd is None:
            return None  # an unknown cd: the after-cd check asks
        shown = "git" + "".join(f" -C {d}" for d in (*run.chdirs, *g.chdirs) if d is not None)
        where, reason = self._git_directory(run, g, self.cwd, shown)
        if where is None:
            return reason
        if g.git_dir is not None or g.bare:
            return self._explicit_gitdir_reason(g, where)
        return self._discovered_repository_reason(where, shown)

    def _git_directory(
        self, run: _GitRun, g: GitGlobals, where: str, shown: str
    ) -> tuple[str | None, str | None]:
        """(the directory git runs in after its ``-C`` options, None) from ``where``; or
        (None, why not known: None when there is nothing to say)."""
        for d in (*run.chdirs, *g.chdirs):
            if d is None and not run.printable:
                return None, None
            if d is None:
                return None, (
                    "git -C names a directory not known statically (whose config would git read?)"
                )
            if d:  # git ignores `-C ""`
                moved = resolve_path(d, where, self.home)
                if moved is None:
                    return None, f"{shown}: cannot tell which repository git would use"
                where = moved
        return where, None

    def _explicit_gitdir_reason(self, g: GitGlobals, where: str) -> str | None:
        """``--git-dir``/``--bare``: asks unless it names the session's own repository."""
        explicit = resolve_path(g.git_dir, where, self.home) if g.git_dir else where
        if g.git_dir == "?" or explicit is None:
            return "git --git-dir is not known statically: cannot tell which repository"
        gitdir = os.path.realpath(explicit)
        if self._session_owns(gitdir):
            return None
        opt = f"--git-dir={g.git_dir}" if g.git_dir else "--bare"
        return f"git {opt} uses another repository ({self._show(gitdir)})"

    def _discovered_repository_reason(self, where: str, shown: str) -> str | None:
        """The repository git discovers from ``where``: asks when this script writes where
        git looks, or when it is not the session's own."""
        if where == self.start:
            self._session()  # the common case: git where the session is, discovered once
            repo, levels = self.session_repo, self.session_levels
        else:
            levels = []
            repo = discover_repository(where, levels)
        self.git_levels.append(levels)
        for target in self.written:
            if _plants(target, levels):
                return _plant_reason(target, self._show)
        if repo is None or self._session_owns(repo.gitdir):
            return None
        return _foreign_reason(shown, repo, self._show)

    def _session_owns(self, gitdir: str) -> bool:
        """Is ``gitdir`` part of the session's own trusted repository: its git directory, or
        one inside it (a linked worktree's, a submodule's), also when the session itself runs
        in a linked worktree? The session's is discovered once per walk, lazily: only a command
        with git in it pays for the stats."""
        session = self._session()
        if session is None or not trusted_gitdir(session):
            return False
        if self.session_common is None:
            self.session_common = common_gitdir(session.gitdir)
        common = self.session_common
        if not is_protected(common + "/config"):
            return False
        return gitdir == common or gitdir.startswith(common + "/")

    def _session(self) -> Repository | None:
        if not self.session_known:
            self.session_repo = discover_repository(self.start, self.session_levels)
            self.session_known = True
        return self.session_repo

    def _show(self, path: str) -> str:
        start = os.path.realpath(self.start)
        if path.startswith(start + "/"):
            return path[len(start) + 1 :]
        return path

    def _note_written(self, resolved: list[str | None]) -> None:
        """Writes of the same script may plant a repository where an earlier (or concurrent:
        a pipeline, ``&``) git command looks for one."""
        self.written.extend(resolved)
        if not self.git_levels:
            return
        for target in resolved:
            if any(_plants(target, levels) for levels in self.git_levels):
                self.safety.append(
                    SafetyCheck(_plant_reason(target, self._show), classifier_approvable=True)
                )
                return

    def track_cd(self, f: CommandFacts) -> None:
        core = f.core
        if not core or core[0] not in ("cd", "pushd", "popd"):
            return
        if core[0] == "popd":
            self.cwd = None
            return
        args = [a for a in core[1:] if not a.startswith("-") or a == "-"]
        if not args:
            self.cwd = self.home if core[0] == "cd" else None
        elif not f.known or args[0] == "-":
            self.cwd = None
        else:
            self.cwd = resolve_path(args[0], self.cwd, self.home)

    def edits_ok(self, f: CommandFacts, targets: list[str | None]) -> bool:
        core = f.core
        if not f.known or core is None or f.via_xargs:
            return False  # xargs: the operands come from stdin
        if not (f.read_only or core[0] in _EDIT_PROGRAMS or _read_only_but_writes(f)):
            return False
        if core[0] == "sed" and sed_in_place_operands(list(core[1:])) is None:
            return False
        for t in targets:
            if t is None or not is_inside(t, self.dirs) or is_protected(t):
                return False
        return True


def _read_only_but_writes(f: CommandFacts) -> bool:
    """A read-only program whose only effect is an output redirect (``echo x > f``)."""
    return bool(f.writes) and f.reads_only
