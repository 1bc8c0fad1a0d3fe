"""Which words of a command are paths it reads: per-program operand tables (data) and a scanner.

The tables live in :mod:`permissions.bash.operand_specs`; this module scans an argv with them.
Unknown options are treated as flags, except that a value that *looks* like a path after one
(``--foo=/etc/x``, ``--foo ~/x``) is checked too: a mis-parse must cost a question, never a
read outside the working directories.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from permissions.bash.operand_specs import SPECS, OperandSpec

__all__ = [
    "SPECS",
    "Operand",
    "OperandSpec",
    "full_long",
    "looks_like_path",
    "scan_operands",
]


class Operand(NamedTuple):
    """A path inside argument ``pos``, starting at character ``offset`` of its value.

    ``maybe``: only a guess (after an unknown option, an expression that may be a file): it
    counts only if it looks like a path. ``indirect``: a file naming further paths.
    ``chdir``: a directory the following operands are relative to (``git -C``).
    """

    pos: int
    offset: int = 0
    maybe: bool = False
    indirect: bool = False
    chdir: bool = False


_new_tuple = tuple.__new__


def _op(pos: int, maybe: bool = False) -> Operand:
    """``Operand(pos, maybe=maybe)`` without the NamedTuple's Python-level constructor (a hot
    path)."""
    return _new_tuple(Operand, (pos, 0, maybe, False, False))  # type: ignore[no-any-return]


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_VALUE_SHAPES = frozenset({"v", "p", "i", "v!", "p!"})


def looks_like_path(value: str) -> bool:
    """An absolute, home or parent-relative path (``/x``, ``~/x``, ``../x``, ``$HOME/x``)."""
    v = value.lstrip("\"'")
    return v.startswith(("/", "~", "../", "$HOME", "${HOME}")) or v == ".."


def _long(spec: OperandSpec, name: str) -> str | None:
    full = full_long(spec.options, name)
    return None if full is None else spec.options[full]


def full_long(options: dict[str, str], name: str) -> str | None:
    """The long option ``name`` stands for: itself, or the one it is a unique prefix of."""
    if name in options:
        return name
    if len(name) < 4:
        return None
    hits = [k for k in options if k.startswith(name) and k.startswith("--")]
    return hits[0] if len(hits) == 1 else None  # GNU unique prefixes


class _Scan:
    def __init__(self, spec: OperandSpec, args: Sequence[str]) -> None:
        self.spec = spec
        self.args = args
        self.out: list[Operand] = []
        self.pattern_given = False
        self.pattern_pending = False  # the next operand is the pattern (grep PATTERN FILE...)
        self.stopped = False

    def value(self, shape: str, index: int, offset: int) -> None:
        """Record the value (at ``args[index][offset:]``) of an option of ``shape``."""
        if shape.endswith("!"):
            self.pattern_given = True
            shape = shape[:-1]
        if shape == "p":
            self.out.append(Operand(index, offset))
        elif shape == "i":
            self.out.append(Operand(index, offset, indirect=True))

    def run(self) -> list[Operand]:
        args = self.args
        self.pattern_pending = self.spec.pattern_first and not self.pattern_given
        i, n, end = 0, len(args), False
        while i < n:
            a = args[i]
            if end or a == "-" or not a.startswith("-") or len(a) == 1:
                if self.operand(a, i):
                    break
                i += 1
            elif a == "--":
                end = True
                i += 1
            elif a.startswith("--"):
                i = self.long_option(a, i)
            else:
                i = self.cluster(a, i)
                self.pattern_pending = self.pattern_pending and not self.pattern_given
        return self.out

    def operand(self, a: str, i: int) -> bool:
        """Record the operand ``args[i]`` if it is a path; True when the scan ends there."""
        spec = self.spec
        if self.stopped:
            return False
        if self.pattern_pending:
            self.pattern_pending = False
            if spec.pattern_maybe_path:
                self.out.append(Operand(i, maybe=True))
            return False
        if (
            not spec.operands
            or a == "-"
            or (spec.assignments and _ASSIGNMENT.match(a))
            or (not spec.plus_operands and a.startswith("+"))
        ):
            return False
        self.out.append(_op(i))
        return spec.first_only

    def long_option(self, a: str, i: int) -> int:
        """Scan the long option ``args[i]``; the index of the next word."""
        name, eq, _ = a.partition("=")
        shape = _long(self.spec, name)
        if shape is None or shape == "o":
            if eq:
                self.out.append(Operand(i, len(name) + 1, maybe=True))
            elif i + 1 < len(self.args):
                self.out.append(Operand(i + 1, maybe=True))
            return i + 1
        if shape in ("nopattern", "stop"):
            self.pattern_pending = self.pattern_pending and shape != "nopattern"
            self.stopped |= shape == "stop"
            return i + 1
        if eq and shape in _VALUE_SHAPES:
            self.value(shape, i, len(name) + 1)
            return i + 1
        if shape in ("vv", "vp"):
            if shape == "vp":
                self.value("p", i + 2, 0)
            return i + 3
        self.value(shape, i + 1, 0)
        return i + 2

    def cluster(self, a: str, i: int) -> int:
        """Scan the short-option cluster ``args[i]``; the index of the next word."""
        for j in range(1, len(a)):
            shape = self.spec.options.get("-" + a[j])
            if shape is None:
                continue
            if shape == "o":
                break
            if shape == "stop":
                self.stopped = True
                continue
            if shape not in _VALUE_SHAPES:
                continue
            if j + 1 < len(a):
                self.value(shape, i, j + 1)
                return i + 1
            self.value(shape, i + 1, 0)
            return i + 2
        return i + 1


def scan_operands(prog: str, args: Sequence[str]) -> list[Operand] | None:
    """The path operands of ``prog args`` (positions in ``args``); None: not a path program."""
    if prog == "find":
        return _find(args)
    if prog == "git":
        if args and args[0] not in _GIT_CONTENT and not args[0].startswith("-"):
            return []  # the common case: no -C, no file whose contents it prints
        return _git(args)
    if prog == "dd":
        return [Operand(k, 3) for k, a in enumerate(args) if a.startswith("if=")]
    spec = SPECS.get(prog)
    if spec is None:
        return None
    if not spec.pattern_first and spec.operands:
        for a in args:
            if a[:1] in "-+":
                break
        else:  # only operands: every one is a path
            return [_op(k) for k in range(1 if spec.first_only and args else len(args))]
    scan = _Scan(spec, args)
    out = scan.run()
    if spec.pattern_first and scan.pattern_given:
        # `grep foo -e bar file`: with -e anywhere, every operand is a file (getopt permutes)
        again = _Scan(spec, args)
        again.pattern_given = True
        out = again.run()
    return out


_FIND_PATH_TESTS = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})


def _find(args: Sequence[str]) -> list[Operand]:
    out: list[Operand] = []
    i, n = 0, len(args)
    while i < n and (args[i] in ("-H", "-L", "-P") or args[i].startswith("-O")):
        i += 1
    if i < n and args[i] == "-D":
        i += 2
    while i < n and not args[i].startswith("-") and args[i] not in ("(", "!", ")", ","):
        out.append(Operand(i))
        i += 1
    while i < n:
        a = args[i]
        if a in _FIND_PATH_TESTS or (a.startswith("-newer") and len(a) == 8 and a[7] != "t"):
            out.append(Operand(i + 1))
            i += 2
            continue
        if a == "-files0-from":
            out.append(Operand(i + 1, indirect=True))
            i += 2
            continue
        i += 1
    return out


# git subcommands that print the contents of the files they are given (after `--`, as
# `REV:PATH`, or blame's file): a Read rule on such a file holds for them as for `cat`.
_GIT_CONTENT = frozenset(
    {"show", "log", "diff", "whatchanged", "blame", "annotate", "format-patch", "diff-tree"}
    | {"cat-file", "grep", "archive"}
)
_GIT_OBJECT = frozenset({"show", "cat-file", "diff", "archive", "grep"})
_GIT_BLAME = frozenset({"blame", "annotate"})


def _git(args: Sequence[str]) -> list[Operand]:
    """``git -C DIR``: the directories git reads (cumulative, relative to the previous one).

    The caller resolves them in order; ``git diff`` reads any file outside the work tree
    (it then acts as ``--no-index``), so its operands that look like paths are checked too,
    and ``git grep -f FILE`` reads a pattern file."""
    out: list[Operand] = []
    i, n = 0, len(args)
    while i < n and args[i].startswith("-"):
        a = args[i]
        if a == "-C" and i + 1 < n:
            out.append(Operand(i + 1, chdir=True))
            i += 2
            continue
        i += 2 if a in ("-c", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= n:
        return out
    sub, i = args[i], i + 1
    no_index = "--no-index" in args[i:]
    pathspecs = False
    while i < n:
        a = args[i]
        if a == "--" and sub in _GIT_CONTENT:
            pathspecs = True  # what follows names files whose contents git prints
        elif pathspecs or (sub in _GIT_BLAME and not a.startswith("-")):
            out.append(Operand(i))
        elif sub in _GIT_OBJECT and ":" in a and not a.startswith("-") and a[-1] != ":":
            out.append(Operand(i, a.index(":") + 1))  # `HEAD:secrets/key`: that file's text
        elif sub == "diff" and not a.startswith("-"):
            out.append(_op(i, not no_index))
        elif sub == "grep" and a in ("-f", "--file") and i + 1 < n:
            out.append(Operand(i + 1))
            i += 1
        elif sub == "grep" and a.startswith("--file="):
            out.append(Operand(i, 7))
        i += 1
    return out
