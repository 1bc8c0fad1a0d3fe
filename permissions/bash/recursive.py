"""Which folders a command reads whole: ``grep -r``, ``rg``, ``diff -r``, ``cp -r``, ``rsync``,
``scp -r``, ``zip -r`` (the table ``operand_specs.RECURSIVE``) and, with grammars of their own,
``tar c``, ``find -exec``, ``fd -x``, ``git grep``.

Such a command reads files it never names: :mod:`permissions.bash.reach` asks when a ``Read``
deny or ask rule may cover one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from permissions.bash.operand_specs import (
    NAMES_ONLY_EXEC,
    RECURSIVE,
    SPECS,
    TAR_PROGRAMS,
    RecursiveSpec,
)
from permissions.bash.operands import Operand, full_long, looks_like_path
from permissions.bash.wrappers import basename

__all__ = ["RecursiveRead", "recursive_reads"]


class RecursiveRead(NamedTuple):
    """A command reading the contents of whole folders (see ``operand_specs.RECURSIVE``).

    ``how`` names it in messages (``grep -r``). ``ops`` are the folders (or files) it reads
    below, in order: a ``chdir`` one moves the base of those after it (``tar -C``, ``git -C``),
    an ``indirect`` one is a file naming more of them. ``cwd``: it also reads the base folder
    itself (no folder operand: ``rg x``; ``git grep``), unless ``stdin_first`` and its stdin
    is a pipe or a file (``git log | rg x``). ``anywhere``: what it reads cannot be bounded
    from its words (``git grep x -- ':/'``).
    """

    how: str
    ops: list[Operand]
    cwd: bool = False
    anywhere: bool = False
    stdin_first: bool = False


_ONE_VALUE = frozenset({"v", "p", "i", "v!", "p!"})
_Seen = tuple[str, str | None, int, int]  # option, its value, where the value is (pos, offset)


def _getopt(options: dict[str, str], args: Sequence[str]) -> tuple[list[_Seen], list[int]]:
    """GNU getopt over ``args`` with the shapes of ``options`` (options may follow operands):
    the options seen, long ones by full name, and the positions of the operands."""
    seen: list[_Seen] = []
    pos: list[int] = []
    i, n, end = 0, len(args), False
    while i < n:
        a = args[i]
        if end or a == "-" or not a.startswith("-"):
            pos.append(i)
            i += 1
        elif a == "--":
            end = True
            i += 1
        elif a.startswith("--"):
            name, eq, val = a.partition("=")
            full = full_long(options, name) or name
            shape = options.get(full)
            if eq:
                seen.append((full, val, i, len(name) + 1))
                i += 1
            elif shape in _ONE_VALUE:
                seen.append((full, args[i + 1] if i + 1 < n else None, i + 1, 0))
                i += 2
            else:
                seen.append((full, None, -1, 0))
                i += 3 if shape in ("vv", "vp") else 1
        else:
            i = _cluster(options, args, i, seen)
    return seen, pos


def _cluster(options: dict[str, str], args: Sequence[str], i: int, seen: list[_Seen]) -> int:
    """Record the short options of the cluster ``args[i]``; the index of the next word."""
    a = args[i]
    for j in range(1, len(a)):
        name = "-" + a[j]
        shape = options.get(name)
        if shape is None or shape not in _ONE_VALUE | {"o", "vv", "vp"}:
            seen.append((name, None, -1, 0))
            continue
        if j + 1 < len(a):
            seen.append((name, a[j + 1 :], i, j + 1))
            return i + 1
        if shape == "o":
            seen.append((name, None, -1, 0))
            return i + 1
        seen.append((name, args[i + 1] if i + 1 < len(args) else None, i + 1, 0))
        return i + (3 if shape in ("vv", "vp") else 2)
    return i + 1


def _options_of(prog: str, rs: RecursiveSpec) -> dict[str, str]:
    base = SPECS[prog].options if prog in SPECS else rs.values
    flags = {f: "f" for f in rs.flags | rs.names_only if f not in base}
    return {**flags, **base}


_RECURSIVE_OPTIONS = {prog: _options_of(prog, rs) for prog, rs in RECURSIVE.items()}


def _is_remote(arg: str) -> bool:
    """``host:path`` or ``rsync://host/path``: a path on another machine (scp, rsync)."""
    colon = arg.find(":")
    slash = arg.find("/")
    return colon > 0 and (slash == -1 or colon < slash)


def _recurses(rs: RecursiveSpec, seen: list[_Seen]) -> bool:
    if not rs.flags:
        return True
    for name, value, _, _ in seen:
        if name in rs.flags:
            return True
        word = rs.flag_values.get(name)
        # GNU argmatch takes an unambiguous abbreviation of the value (`-d rec`)
        if word is not None and value is not None and len(value) >= 3 and word.startswith(value):
            return True
    return False


def _table_read(prog: str, rs: RecursiveSpec, args: Sequence[str]) -> RecursiveRead | None:
    options = _RECURSIVE_OPTIONS[prog]
    seen, pos = _getopt(options, args)
    names = {s[0] for s in seen}
    if names & rs.names_only or not _recurses(rs, seen):
        return None
    spec = SPECS.get(prog)
    if spec is not None and spec.pattern_first and pos:
        if not any(options.get(s[0], "").endswith("!") for s in seen):
            pos = pos[1:]  # `grep -r PATTERN DIR...`: the first operand is the pattern
    if rs.sources == "but_last" and not names & rs.target:
        pos = pos[:-1]
    elif rs.sources == "after_first":
        pos = pos[1:]
    if rs.remote:
        pos = [k for k in pos if not _is_remote(args[k])]
    ops = [Operand(k) for k in pos]
    ops += [Operand(p, off, indirect=True) for f, _, p, off in seen if options.get(f) == "i"]
    if prog == "zip" and "-@" in names:
        ops.append(Operand(-1, indirect=True))  # names read from stdin
    how = prog if not rs.flags else f"{prog} -r"
    return RecursiveRead(how, ops, rs.default_cwd and not pos, False, rs.stdin_first)


_TAR_VALUE_LETTERS = frozenset("bCfFgHIKLNTVX")
_TAR_MODES = frozenset("cruA")  # create, append, update, concatenate: they read the files named
_TAR_LONG = {
    **dict.fromkeys(("--create", "--append", "--update", "--catenate", "--concatenate"), "m"),
    **dict.fromkeys(
        "--file --directory --files-from --exclude --exclude-from --transform --xform --owner "
        "--group --mode --mtime --newer --after-date --newer-mtime --label --format "
        "--use-compress-program --to-command --checkpoint-action --index-file --info-script "
        "--new-volume-script --rsh-command --volno-file --tape-length --blocking-factor "
        "--record-size --listed-incremental --suffix --strip-components --sort --warning "
        "--occurrence --quoting-style --pax-option --level --starting-file --owner-map "
        "--group-map".split(),
        "v",
    ),
}


def _tar_value(letter: str, pos: int, offset: int) -> Operand | None:
    if letter in ("C", "--directory"):
        return Operand(pos, offset, chdir=True)
    if letter in ("T", "--files-from"):
        return Operand(pos, offset, indirect=True)
    return None


def _tar(args: Sequence[str]) -> RecursiveRead | None:
    """``tar c``/``r``/``u``/``A``: the files and folders it archives (``-C`` moves the base of
    those after it, ``-T`` names more of them); None for any other mode (``tar x``, ``tar t``)."""
    ops: list[Operand | None] = []
    create = False
    pending: list[str] = []  # value letters of an old-style bundle (`tar cfC out.tar dir .`)
    i, n, end = 0, len(args), False
    if args and not args[0].startswith("-"):
        create = any(c in _TAR_MODES for c in args[0])
        pending = [c for c in args[0] if c in _TAR_VALUE_LETTERS]
        i = 1
    while i < n:
        a = args[i]
        if pending:
            ops.append(_tar_value(pending.pop(0), i, 0))
            i += 1
        elif end or a == "-" or not a.startswith("-"):
            ops.append(Operand(i))
            i += 1
        elif a == "--":
            end = True
            i += 1
        elif a.startswith("--"):
            name, eq, _ = a.partition("=")
            full = full_long(_TAR_LONG, name) or name
            create |= _TAR_LONG.get(full) == "m"
            if _TAR_LONG.get(full) == "v":
                ops.append(_tar_value(full, i, len(name) + 1) if eq else _tar_value(full, i + 1, 0))
                i += 1 if eq else 2
            else:
                i += 1
        else:
            nxt = i + 1
            for j in range(1, len(a)):
                create |= a[j] in _TAR_MODES
                if a[j] in _TAR_VALUE_LETTERS:
                    attached = j + 1 < len(a)
                    ops.append(
                        _tar_value(a[j], i, j + 1) if attached else _tar_value(a[j], i + 1, 0)
                    )
                    nxt = i + 1 if attached else i + 2
                    break
            i = nxt
    if not create:
        return None
    return RecursiveRead("tar c", [op for op in ops if op is not None and op.pos < n])


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find_exec(args: Sequence[str]) -> RecursiveRead | None:
    """``find DIR... -exec CMD {} +``: CMD gets every file below DIR (find itself reads only
    names); None without such an action, or when CMD too reads only names (``-exec ls``)."""
    runs = [k for k, a in enumerate(args) if a in _FIND_EXEC]
    if all(k + 1 < len(args) and basename(args[k + 1]) in NAMES_ONLY_EXEC for k in runs):
        return None
    i, n = 0, len(args)
    while i < n and (args[i] in ("-H", "-L", "-P") or args[i].startswith("-O")):
        i += 1
    if i < n and args[i] == "-D":
        i += 2
    starts: list[Operand] = []
    while i < n and not args[i].startswith("-") and args[i] not in ("(", "!", ")", ","):
        starts.append(Operand(i))
        i += 1
    return RecursiveRead("find -exec", starts, not starts)


_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})


def _fd_exec(args: Sequence[str]) -> RecursiveRead | None:
    """``fd PATTERN DIR... -x CMD``: like ``find -exec`` (fd alone prints names only)."""
    cut = next((k for k, a in enumerate(args) if a.partition("=")[0] in _FD_EXEC), None)
    if cut is None:
        return None
    prog = args[cut + 1] if cut + 1 < len(args) else ""
    if "=" not in args[cut] and basename(prog) in NAMES_ONLY_EXEC:
        return None
    seen, pos = _getopt(SPECS["fd"].options, args[:cut])
    ops = [Operand(p, off, chdir=True) for f, _, p, off in seen if f == "--base-directory"]
    ops += [Operand(k) for k in pos[1:]]  # the first operand is the pattern
    ops += [Operand(p, off) for f, _, p, off in seen if f == "--search-path" and p >= 0]
    return RecursiveRead("fd -x", ops, len(ops) == sum(op.chdir for op in ops))


_GIT_VALUE_GLOBALS = frozenset(
    {"-c", "--git-dir", "--namespace", "--config-env", "--super-prefix", "--exec-path"}
)


def _git_grep(args: Sequence[str]) -> RecursiveRead | None:
    """``git [-C DIR] grep``: it searches the whole folder (tracked files, or all with
    ``--untracked``/``--no-index``); pathspecs only narrow that, except one leaving the folder
    (``../x``, ``/x``) or a magic one (``:/`` is the top of the repository)."""
    ops: list[Operand] = []
    i, n = 0, len(args)
    while i < n and args[i].startswith("-"):
        a = args[i]
        if a in ("-C", "--work-tree") and i + 1 < n:
            ops.append(Operand(i + 1, chdir=a == "-C"))
            i += 2
        elif a.startswith("--work-tree="):
            ops.append(Operand(i, 12))
            i += 1
        else:
            i += 2 if a in _GIT_VALUE_GLOBALS else 1
    if i >= n or args[i] != "grep":
        return None
    rest = range(i + 1, n)
    ops += [Operand(k) for k in rest if looks_like_path(args[k])]
    anywhere = any(args[k].startswith(":") for k in rest)
    return RecursiveRead("git grep", ops, True, anywhere)


def recursive_reads(prog: str, args: Sequence[str]) -> RecursiveRead | None:
    """What ``prog args`` reads recursively (positions in ``args``); None: it reads no folder's
    contents (not such a program, or not in a recursive mode: ``grep x f``, ``tar x``)."""
    rs = RECURSIVE.get(prog)
    if rs is not None:
        return _table_read(prog, rs, args)
    if prog in TAR_PROGRAMS:
        return _tar(args)
    if prog == "find":
        return _find_exec(args)
    if prog == "fd":
        return _fd_exec(args)
    if prog == "git":
        return _git_grep(args)
    return None
