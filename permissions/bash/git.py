"""Git for the bash analysis: the subcommands that only read, the options that write or run
code, and which repository (so which configuration) a git command would use.

A repository's ``config`` can name programs git runs on its own (``core.fsmonitor`` on every
``status``, ``diff.external``, textconv drivers, hooks): whoever writes that file runs code as
the user the next time git reads it. ``discover_repository`` repeats git's own discovery
statically so the walk can tell the session's repository (its ``.git`` is a protected path)
from one the model could have planted (a nested repository, a bare repository written as plain
files, a ``.git`` file pointing elsewhere).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from permissions.bash.paths import is_protected

__all__ = [
    "GitGlobals",
    "Repository",
    "common_gitdir",
    "discover_repository",
    "git_env_var",
    "git_read_only",
    "parse_git_globals",
    "trusted_gitdir",
]

_GIT_READ_ONLY = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "cat-file",
        "blame",
        "annotate",
        "shortlog",
        "describe",
        "whatchanged",
        "count-objects",
        "merge-base",
        "name-rev",
        "for-each-ref",
        "show-ref",
        "rev-list",
        "var",
        "version",
        "grep",
        "check-ignore",
        "check-attr",
        "diff-tree",
        "diff-files",
        "diff-index",
        "cherry",
        "show-branch",
        "verify-commit",
        "verify-tag",
    }
)
_GIT_UNSAFE_FLAGS = frozenset(
    {"--output", "--ext-diff", "--textconv", "--exec", "--upload-pack", "--receive-pack"}
    | {"--open-files-in-pager", "--paginate", "--filters"}
)
# Every abbreviation parse-options would take for an unsafe option (four characters or more).
_GIT_UNSAFE_ABBREVIATIONS = frozenset(
    u[:k] for u in _GIT_UNSAFE_FLAGS for k in range(4, len(u) + 1)
)
# Complete git options that are also prefixes of an unsafe one (not abbreviations of it).
_GIT_SAFE_PREFIXES = frozenset({"--text", "--filter"})
_GIT_CONFIG_SUBCOMMANDS_WRITE = frozenset(
    {"set", "unset", "rename-section", "remove-section", "edit"}
)


def _git_unsafe_flag(sub: str, arg: str) -> bool:
    """An option that writes a file or runs a program, also as a unique prefix (parse-options
    accepts ``--outp=x``) and, for grep, ``-O`` inside a cluster (``-nOvim``)."""
    if arg.startswith("--"):
        name = arg.split("=", 1)[0]
        if name in _GIT_UNSAFE_FLAGS:
            return True
        return name in _GIT_UNSAFE_ABBREVIATIONS and name not in _GIT_SAFE_PREFIXES
    return sub == "grep" and arg.startswith("-") and "O" in arg


_GIT_BRANCH_LIST_FLAGS = frozenset(
    {"-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose", "--list", "-l"}
    | {"--show-current", "--no-color", "--color", "--no-column", "--column", "-i"}
    | {"--ignore-case", "--omit-empty"}
)
_GIT_BRANCH_VALUE_FLAGS = frozenset(
    {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort"}
    | {"--format"}
)
_GIT_CONFIG_READ = frozenset(
    {"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "--get-color"}
    | {"--get-colorbool"}
)
_GIT_CONFIG_WRITE = frozenset(
    {"--add", "--unset", "--unset-all", "--replace-all", "--rename-section"}
    | {"--remove-section", "--edit", "-e"}
)


def _git_list_only(args: Sequence[str], list_flags: frozenset[str]) -> bool:
    """branch/tag: read-only only when listing (no positional except with --list)."""
    listing = any(a in ("--list", "-l") for a in args)
    i = 0
    while i < len(args):
        a = args[i]
        name = a.split("=", 1)[0]
        if name in _GIT_BRANCH_VALUE_FLAGS:
            i += 1 if "=" in a else 2
            continue
        if a in list_flags or a.startswith("--format=") or a.startswith("--sort="):
            i += 1
            continue
        if a.startswith("-"):
            return False
        if not listing:
            return False
        i += 1
    return True


_GIT_HARMLESS_GLOBALS = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"}
)
_GIT_TAG_LIST_FLAGS = frozenset({"-l", "--list", "-n", "--no-color", "--color"})


def git_read_only(args: Sequence[str]) -> bool:
    """``git ARGS`` only reads: harmless global options, a read-only subcommand (or a listing
    form of one that can also write), no option that writes a file or runs a program."""
    i = _git_subcommand_index(args)
    if i is None:
        return False
    sub, rest = args[i], list(args[i + 1 :])
    for a in rest:
        if a == "--":
            break
        if _git_unsafe_flag(sub, a):
            return False
    if sub in _GIT_READ_ONLY:
        return True
    listing = _GIT_LISTING.get(sub)
    return listing is not None and listing(rest)  # unknown: may be an alias running `!cmd`


def _git_subcommand_index(args: Sequence[str]) -> int | None:
    """Where the subcommand is, after global options that neither write nor change which
    repository or configuration git uses (-C aside); None if another option comes first."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-C":
            # which repository (so which config) -C reaches is a question for the file system:
            # effects.WalkState asks unless it is the session's own
            i += 2
        elif a in _GIT_HARMLESS_GLOBALS:
            i += 1
        elif a.startswith("-"):
            return None  # -c, -p/--paginate, --git-dir, --work-tree, --exec-path, --config-env
        else:
            return i
    return None


def _git_config_reads(rest: list[str]) -> bool:
    if any(a in _GIT_CONFIG_SUBCOMMANDS_WRITE for a in rest):
        return False
    writes = any(a.split("=", 1)[0] in _GIT_CONFIG_WRITE for a in rest)
    if rest[:1] in (["get"], ["list"]):
        return not writes
    return any(a in _GIT_CONFIG_READ for a in rest) and not writes


# Subcommands that also write: read-only only in these forms (the arguments after them).
_GIT_LISTING: dict[str, Callable[[list[str]], bool]] = {
    "branch": lambda rest: _git_list_only(rest, _GIT_BRANCH_LIST_FLAGS),
    "tag": lambda rest: _git_list_only(rest, _GIT_TAG_LIST_FLAGS),
    "remote": lambda rest: all(a in ("-v", "--verbose") for a in rest) or (rest[:1] == ["get-url"]),
    "stash": lambda rest: bool(rest) and rest[0] in ("list", "show"),
    "worktree": lambda rest: rest[:1] == ["list"],
    "reflog": lambda rest: not rest or rest[0] == "show" or rest[0].startswith("-"),
    "config": _git_config_reads,
}


# Environment variables through which a git command takes its repository, its configuration or a
# program to run: every GIT_* (GIT_DIR, GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT/KEY_n/VALUE_n,
# GIT_CONFIG_PARAMETERS, GIT_EXEC_PATH, GIT_PAGER, GIT_SSH_COMMAND, ...), the homes of the
# global config ($HOME/.gitconfig, $XDG_CONFIG_HOME/git/config), and the programs git starts by
# name (pager, editor, askpass, less's input filters, PATH for all of them and for git itself).
_GIT_ENV_NAMES = frozenset(
    {"HOME", "XDG_CONFIG_HOME", "PATH", "PAGER", "EDITOR", "VISUAL", "SSH_ASKPASS", "LESSOPEN"}
    | {"LESSCLOSE"}
)


def git_env_var(name: str) -> bool:
    """True when setting ``name`` changes which repository, configuration or helper program a
    git command uses (never a safe assignment in front of a read-only command)."""
    return name.startswith("GIT_") or name in _GIT_ENV_NAMES


@dataclass(slots=True)
class GitGlobals:
    """The options before git's subcommand that decide where it runs and what it reads.

    ``chdirs``: the ``-C`` values in order (None: not known statically). ``git_dir``/
    ``work_tree``: the ``--git-dir``/``--work-tree`` values (None: not given; "?" unknown).
    ``config``: the ``-c``/``--config-env`` options as written. ``unknown``: a word in the option
    part of the command could not be known statically (``git $opts status``). ``subcommand``:
    the first word after the options.
    """

    chdirs: list[str | None]
    git_dir: str | None = None
    work_tree: str | None = None
    bare: bool = False
    exec_path: str | None = None
    config: list[str] | None = None
    unknown: bool = False
    subcommand: str | None = None


# git.c's handle_options: options taking a value, as a separate word or (long ones) after "="
# (git takes no abbreviation of them), and the ones taking none. Any other option makes git
# print its usage and exit before it reads a repository.
_GLOBAL_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
_GLOBAL_VALUE_WORD_ONLY = frozenset({"--super-prefix", "--attr-source", "--shallow-file"})
_GLOBAL_INLINE_ONLY = frozenset({"--exec-path", "--list-cmds", "--super-prefix", "--attr-source"})
_GLOBAL_FLAGS = frozenset(
    {"-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--literal-pathspecs"}
    | {"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks"}
    | {"--bare", "--no-lazy-fetch", "--no-advice", "--html-path", "--man-path", "--info-path"}
    | {"--exec-path", "-v", "--version", "-h", "--help"}
)


def parse_git_globals(args: Sequence[str], known: Sequence[bool]) -> GitGlobals:
    """The global options of ``git ARGS`` (``args`` without the program name); ``known[i]``
    says whether ``args[i]`` is a literal. Parsing stops at the subcommand (``subcommand``;
    None when there is none) or at an option git does not know (git then prints its usage and
    exits: nothing more matters)."""
    out = GitGlobals([])
    i = 0
    while i < len(args):
        a = args[i]
        if not known[i]:
            out.unknown = True  # `git $x status`: $x could be `-C dir` or `-c k=v`
            return out
        if not a.startswith("-") or a == "-":
            out.subcommand = a
            return out
        name, eq, inline = a.partition("=")
        if not eq and (a in _GLOBAL_VALUE or a in _GLOBAL_VALUE_WORD_ONLY):
            value_known = i + 1 < len(args) and known[i + 1]
            _set_global(out, a, args[i + 1] if value_known else None)
            i += 2
        elif (
            eq and name.startswith("--") and (name in _GLOBAL_VALUE or name in _GLOBAL_INLINE_ONLY)
        ):
            _set_global(out, name, inline)
            i += 1
        elif a in _GLOBAL_FLAGS:
            out.bare = out.bare or a == "--bare"
            i += 1
        else:
            return out
    return out


def _set_global(out: GitGlobals, name: str, value: str | None) -> None:
    if name == "-C":
        out.chdirs.append(value)
    elif name in ("-c", "--config-env"):
        out.config = [*(out.config or []), f"{name} {value if value is not None else '?'}"]
    elif name == "--git-dir":
        out.git_dir = value if value is not None else "?"
    elif name == "--work-tree":
        out.work_tree = value if value is not None else "?"
    elif name == "--exec-path":
        out.exec_path = value if value is not None else "?"


@dataclass(frozen=True, slots=True)
class Repository:
    """The git directory discovery found: ``gitdir`` (real path), how (``"dir"``: a ``.git``
    directory, ``"file"``: a ``.git`` file naming it, ``"bare"``: a directory shaped like a git
    directory, ``"broken"``: a ``.git`` that is neither), and ``where`` it was found."""

    gitdir: str
    how: str
    where: str


# Far deeper than any real tree; only bounds the walk (each level costs two or three stats).
_MAX_LEVELS = 128


def _gitdir_shaped(path: str) -> bool:
    """Could git take ``path`` for a git directory? (git's is_git_directory wants a valid
    HEAD, objects/ and refs/.) Only presence is tested, so a HEAD git would reject still counts
    (fail closed), and objects/ is not required: GIT_OBJECT_DIRECTORY can stand in for it.
    HEAD first: most directories have none, so one stat settles them."""
    return os.path.lexists(path + "/HEAD") and os.path.lexists(path + "/refs")


def _gitfile_target(dotgit: str) -> str | None:
    """The directory a ``.git`` file names (``gitdir: PATH``, relative to the file), or None
    when it is not a readable gitfile."""
    try:
        with open(dotgit, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    text = head.decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:") or "\n" in text:
        return None
    target = text[len("gitdir:") :].strip()
    if not target:
        return None
    return os.path.join(os.path.dirname(dotgit), target)


def _dotgit(level: str) -> Repository | None:
    """The repository ``LEVEL/.git`` gives git, or None when git looks further (no ``.git``,
    or a ``.git`` directory that is not a repository)."""
    dotgit = level.rstrip("/") + "/.git"
    try:
        st = os.stat(dotgit)
    except OSError:
        return None  # absent, or a dangling link: git's stat fails the same way and moves on
    if stat.S_ISDIR(st.st_mode):
        if not _gitdir_shaped(dotgit):
            return None
        real = os.path.realpath(dotgit) if os.path.islink(dotgit) else dotgit
        return Repository(real, "dir", level)
    target = _gitfile_target(dotgit)
    if target is None:
        return Repository(dotgit, "broken", level)
    return Repository(os.path.realpath(target), "file", level)


def discover_repository(start: str, levels: list[str] | None = None) -> Repository | None:
    """The repository git would find from the directory ``start`` (git's setup_git_directory:
    at each level ``.git`` first, then the level itself as a bare repository, then the parent),
    or None when there is none up to the root. ``levels`` collects the directories looked at,
    nearest first (real paths: git works from its physical cwd). Discovery limits from the
    environment (GIT_CEILING_DIRECTORIES, file-system boundaries) only make git stop earlier,
    so they are ignored: fail closed. A few stats per level, and no more than _MAX_LEVELS."""
    d = os.path.realpath(start)
    for _ in range(_MAX_LEVELS):
        if levels is not None:
            levels.append(d)
        found = _dotgit(d)
        if found is not None:
            return found
        if _gitdir_shaped(d):
            return Repository(d, "bare", d)
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    return Repository(d, "broken", d)  # deeper than any real tree: do not guess


def trusted_gitdir(repo: Repository | None) -> bool:
    """The session's repository is trusted when git found it through a ``.git`` entry and its
    config is a protected path (inside a ``.git`` directory: the repository itself, or a
    worktree's or submodule's git directory under it), which the model cannot write without a
    prompt."""
    return (
        repo is not None and repo.how in ("dir", "file") and is_protected(repo.gitdir + "/config")
    )


def common_gitdir(gitdir: str) -> str:
    """The repository a git directory belongs to: a linked worktree's git directory
    (``.git/worktrees/NAME``) names the main one in its ``commondir`` file, where git reads the
    config; any other git directory is its own."""
    try:
        with open(gitdir + "/commondir", "rb") as fh:
            target = fh.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return gitdir
    if not target or "\n" in target:
        return gitdir
    return os.path.realpath(os.path.join(gitdir, target))
