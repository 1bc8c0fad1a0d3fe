"""Read-only git: the subcommands that only read, and the options that write or run code."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["git_read_only"]

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


def git_read_only(args: Sequence[str]) -> bool:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-C":
            i += 2
            continue
        if a in (
            "--no-pager",
            "-P",
            "--no-optional-locks",
            "--literal-pathspecs",
            "--no-replace-objects",
        ):
            i += 1
            continue
        if a.startswith("-"):
            return False  # -c, -p/--paginate, --git-dir, --work-tree, --exec-path, --config-env
        break
    if i >= len(args):
        return False
    sub, rest = args[i], list(args[i + 1 :])
    for a in rest:
        if a == "--":
            break
        if _git_unsafe_flag(sub, a):
            return False
    if sub in _GIT_READ_ONLY:
        return True
    if sub == "branch":
        return _git_list_only(rest, _GIT_BRANCH_LIST_FLAGS)
    if sub == "tag":
        return _git_list_only(rest, frozenset({"-l", "--list", "-n", "--no-color", "--color"}))
    if sub == "remote":
        return all(a in ("-v", "--verbose") for a in rest) or (rest[:1] == ["get-url"])
    if sub == "stash":
        return bool(rest) and rest[0] in ("list", "show")
    if sub == "worktree":
        return rest[:1] == ["list"]
    if sub == "reflog":
        return not rest or rest[0] == "show" or rest[0].startswith("-")
    if sub == "config":
        if any(a in _GIT_CONFIG_SUBCOMMANDS_WRITE for a in rest):
            return False
        if rest[:1] in (["get"], ["list"]):
            return not any(a.split("=", 1)[0] in _GIT_CONFIG_WRITE for a in rest)
        return any(a in _GIT_CONFIG_READ for a in rest) and not any(
            a.split("=", 1)[0] in _GIT_CONFIG_WRITE for a in rest
        )
    return False  # unknown subcommands may be aliases running `!cmd`
