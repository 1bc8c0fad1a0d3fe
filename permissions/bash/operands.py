"""Which words of a command are paths it reads: per-program operand tables (data) and a scanner.

Each program lists the options that take a value and what that value is (shapes below), and
whether its first operand is a pattern, script or filter rather than a file. Anything else
that is not an option is a path operand. Unknown options are treated as flags, except that a
value that *looks* like a path after one (``--foo=/etc/x``, ``--foo ~/x``) is checked too:
a mis-parse must cost a question, never a read outside the working directories.

Option shapes: ``v`` a value that is not a path, ``p`` a path read, ``i`` a file that lists
more paths (those cannot be known: the analysis is not confident), ``vv`` two values, ``vp`` a
name then a path, ``o`` an optional value attached to a short option (``od -w16``); a trailing
``!`` means the option supplies the pattern (then every operand is a path); ``nopattern``
cancels the pattern operand (``rg --files``); ``stop`` ends the path operands (``jq --args``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["SPECS", "Operand", "OperandSpec", "looks_like_path", "scan_operands"]


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


@dataclass(frozen=True, slots=True)
class OperandSpec:
    """The operand grammar of one program."""

    options: dict[str, str]
    pattern_first: bool = False  # grep PATTERN FILE..., sed SCRIPT FILE..., jq FILTER FILE...
    pattern_maybe_path: bool = False  # yq: the expression may be a file
    assignments: bool = False  # awk: `var=value` operands are not files
    first_only: bool = False  # cd DIR: one operand
    operands: bool = True  # False: operands are not paths (date +FMT)
    plus_operands: bool = True  # False: `+N` is not a path (pushd +1)


def _o(text: str) -> dict[str, str]:
    return dict(item.split(":", 1) for item in text.split())  # type: ignore[misc]


def _spec(options: str = "", **kw: bool) -> OperandSpec:
    return OperandSpec(_o(options), **kw)


_GREP = _spec(
    "-e:v! -f:p! -m:v -A:v -B:v -C:v -d:v -D:v --regexp:v! --file:p! --exclude-from:p "
    "--max-count:v --after-context:v --before-context:v --context:v --include:v --exclude:v "
    "--exclude-dir:v --label:v --binary-files:v --devices:v --directories:v "
    "--group-separator:v",
    pattern_first=True,
)
_SUMS = _spec("-a:v -l:v --algorithm:v --length:v")
_PLAIN = _spec()

SPECS: dict[str, OperandSpec] = {
    "cat": _PLAIN,
    "tac": _spec("-s:v --separator:v"),
    "rev": _PLAIN,
    "head": _spec("-n:v -c:v --lines:v --bytes:v"),
    "tail": _spec(
        "-n:v -c:v -s:v --lines:v --bytes:v --pid:v --sleep-interval:v --max-unchanged-stats:v"
    ),
    "less": _spec(
        "-b:v -h:v -j:v -p:v -P:v -x:v -y:v -z:v -#:v -t:v -T:p --tag:v --tag-file:p "
        "--pattern:v --prompt:v --tabs:v --shift:v --jump-target:v --max-back-scroll:v "
        "--max-forw-scroll:v --window:v"
    ),
    "more": _spec("-n:v --lines:v"),
    "wc": _spec("--files0-from:i"),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _spec(
        "-e:v! -f:p! -A:v -B:v -C:v -E:v -g:v -j:v -M:v -m:v -r:v -t:v -T:v -d:v "
        "--regexp:v! --file:p! --files:nopattern --type-list:nopattern --glob:v --iglob:v "
        "--type:v --type-not:v --type-add:v --type-clear:v --max-count:v --max-depth:v "
        "--max-columns:v --max-filesize:v --context:v --after-context:v --before-context:v "
        "--replace:v --encoding:v --threads:v --sort:v --sortr:v --colors:v --color:v "
        "--context-separator:v --field-context-separator:v --field-match-separator:v "
        "--path-separator:v --dfa-size-limit:v --regex-size-limit:v --engine:v --pre-glob:v "
        "--hyperlink-format:v --generate:v --ignore-file:p",
        pattern_first=True,
    ),
    "fd": _spec(
        "-e:v -d:v -t:v -E:v -c:v -j:v -S:v -o:v --extension:v --max-depth:v --min-depth:v "
        "--exact-depth:v --type:v --exclude:v --color:v --threads:v --size:v --owner:v "
        "--changed-within:v --changed-before:v --max-results:v --search-path:p "
        "--base-directory:p --ignore-file:p",
        pattern_first=True,
    ),
    "sed": _spec(
        "-e:v! -f:p! -l:v -i:o --expression:v! --file:p! --line-length:v", pattern_first=True
    ),
    "awk": _spec("-F:v -v:v -f:p! --field-separator:v --assign:v --file:p!", pattern_first=True),
    "jq": _spec(
        "-f:p! -L:p --from-file:p! --indent:v --arg:vv --argjson:vv --slurpfile:vp "
        "--rawfile:vp --args:stop --jsonargs:stop",
        pattern_first=True,
    ),
    "yq": _spec(
        "-o:v -p:v -I:v --output-format:v --input-format:v --indent:v --arg:vv --argjson:vv "
        "--from-file:p! --expression:v!",
        pattern_first=True,
        pattern_maybe_path=True,
    ),
    "sort": _spec(
        "-k:v -S:v -t:v -T:v --key:v --buffer-size:v --field-separator:v "
        "--temporary-directory:v --parallel:v --batch-size:v --sort:v --files0-from:i"
    ),
    "uniq": _spec("-f:v -s:v -w:v --skip-fields:v --skip-chars:v --check-chars:v"),
    "cut": _spec(
        "-b:v -c:v -d:v -f:v --bytes:v --characters:v --delimiter:v --fields:v --output-delimiter:v"
    ),
    "paste": _spec("-d:v --delimiters:v"),
    "nl": _spec(
        "-b:v -d:v -f:v -h:v -i:v -l:v -n:v -s:v -v:v -w:v --body-numbering:v "
        "--section-delimiter:v --footer-numbering:v --header-numbering:v --line-increment:v "
        "--join-blank-lines:v --number-format:v --number-separator:v "
        "--starting-line-number:v --number-width:v"
    ),
    "fold": _spec("-w:v --width:v"),
    "fmt": _spec("-w:v -p:v -g:v --width:v --prefix:v --goal:v"),
    "column": _spec(
        "-c:v -s:v -o:v -N:v -R:v -E:v -H:v -W:v -T:v -l:v -n:v -r:v -i:v -p:v -O:v "
        "--output-width:v --separator:v --output-separator:v --table-columns:v"
    ),
    "expand": _spec("-t:v --tabs:v"),
    "unexpand": _spec("-t:v --tabs:v"),
    "join": _spec("-1:v -2:v -t:v -o:v -e:v -a:v -v:v -j:v"),
    "comm": _spec("--output-delimiter:v"),
    "diff": _spec(
        "-I:v -F:v -L:v -U:v -C:v -D:v -S:v -x:v -W:v -X:p --from-file:p --to-file:p "
        "--exclude-from:p --label:v --ignore-matching-lines:v --show-function-line:v "
        "--ifdef:v --starting-file:v --exclude:v --width:v --tabsize:v --horizon-lines:v "
        "--line-format:v --old-line-format:v --new-line-format:v --unchanged-line-format:v "
        "--old-group-format:v --new-group-format:v --changed-group-format:v "
        "--unchanged-group-format:v --palette:v"
    ),
    "cmp": _spec("-i:v -n:v --ignore-initial:v --bytes:v"),
    "od": _spec(
        "-A:v -j:v -N:v -t:v -S:v -w:o --address-radix:v --skip-bytes:v --read-bytes:v --format:v"
    ),
    "hexdump": _spec("-e:v -n:v -s:v -f:p --format:v --length:v --skip:v --format-file:p"),
    "xxd": _spec("-c:v -g:v -l:v -s:v -o:v -n:v"),
    "strings": _spec(
        "-n:v -t:v -e:v -s:v -T:v --bytes:v --radix:v --encoding:v --output-separator:v --target:v"
    ),
    "base64": _spec("-w:v -b:v -i:p --wrap:v --input:p"),
    "md5sum": _PLAIN,
    "sha1sum": _PLAIN,
    "sha224sum": _PLAIN,
    "sha256sum": _PLAIN,
    "sha384sum": _PLAIN,
    "sha512sum": _PLAIN,
    "b2sum": _spec("-l:v --length:v"),
    "cksum": _SUMS,
    "sum": _PLAIN,
    "ls": _spec(
        "-I:v -T:v -w:v --ignore:v --hide:v --width:v --tabsize:v --format:v --sort:v "
        "--time:v --time-style:v --block-size:v --quoting-style:v --indicator-style:v"
    ),
    "tree": _spec(
        "-L:v -P:v -I:v -H:v -T:v --filelimit:v --timefmt:v --sort:v --charset:v --gitfile:p"
    ),
    "du": _spec(
        "-d:v -B:v -t:v -X:p --max-depth:v --block-size:v --threshold:v --exclude:v "
        "--time-style:v --exclude-from:p --files0-from:i"
    ),
    "stat": _spec("-c:v --format:v --printf:v"),
    "file": _spec(
        "-m:p -f:i -F:v -e:v -P:v --magic-file:p --files-from:i --separator:v "
        "--exclude:v --exclude-quiet:v --parameter:v"
    ),
    "realpath": _spec("--relative-to:p --relative-base:p"),
    "readlink": _PLAIN,
    "date": _spec(
        "-d:v -r:p -f:p -I:o --date:v --reference:p --file:p --iso-8601:v", operands=False
    ),
    "shuf": _spec("-n:v -e:stop -i:stop --head-count:v --echo:stop --input-range:stop"),
    "cd": _spec(first_only=True),
    "source": _spec(first_only=True),  # the arguments after the file are its parameters
    ".": _spec(first_only=True),
    "pushd": _spec(first_only=True, plus_operands=False),
}

_new_tuple = tuple.__new__


def _op(pos: int) -> Operand:
    """``Operand(pos)`` without the NamedTuple's Python-level constructor (a hot path)."""
    return _new_tuple(Operand, (pos, 0, False, False, False))  # type: ignore[no-any-return]


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_VALUE_SHAPES = frozenset({"v", "p", "i", "v!", "p!"})


def looks_like_path(value: str) -> bool:
    """An absolute, home or parent-relative path (``/x``, ``~/x``, ``../x``, ``$HOME/x``)."""
    v = value.lstrip("\"'")
    return v.startswith(("/", "~", "../", "$HOME", "${HOME}")) or v == ".."


def _long(spec: OperandSpec, name: str) -> str | None:
    shape = spec.options.get(name)
    if shape is not None or len(name) < 4:
        return shape
    hits = [k for k in spec.options if k.startswith(name) and k.startswith("--")]
    return spec.options[hits[0]] if len(hits) == 1 else None  # GNU unique prefixes


class _Scan:
    def __init__(self, spec: OperandSpec, args: Sequence[str]) -> None:
        self.spec = spec
        self.args = args
        self.out: list[Operand] = []
        self.pattern_given = False
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
        spec, args = self.spec, self.args
        pattern_pending = spec.pattern_first and not self.pattern_given
        i, n, end = 0, len(args), False
        while i < n:
            a = args[i]
            if end or a == "-" or not a.startswith("-") or len(a) == 1:
                if self.stopped:
                    pass
                elif pattern_pending:
                    pattern_pending = False
                    if spec.pattern_maybe_path:
                        self.out.append(Operand(i, maybe=True))
                elif not spec.operands or a == "-":
                    pass
                elif spec.assignments and _ASSIGNMENT.match(a):
                    pass
                elif not spec.plus_operands and a.startswith("+"):
                    pass
                else:
                    self.out.append(_op(i))
                    if spec.first_only:
                        break
                i += 1
                continue
            if a == "--":
                end = True
                i += 1
                continue
            if a.startswith("--"):
                name, eq, _ = a.partition("=")
                shape = _long(spec, name)
                if shape is None or shape == "o":
                    if eq:
                        self.out.append(Operand(i, len(name) + 1, maybe=True))
                    elif i + 1 < n:
                        self.out.append(Operand(i + 1, maybe=True))
                    i += 1
                    continue
                if shape in ("nopattern", "stop"):
                    pattern_pending = pattern_pending and shape != "nopattern"
                    self.stopped |= shape == "stop"
                    i += 1
                    continue
                if eq and shape in _VALUE_SHAPES:
                    self.value(shape, i, len(name) + 1)
                    i += 1
                    continue
                if shape in ("vv", "vp"):
                    if shape == "vp":
                        self.value("p", i + 2, 0)
                    i += 3
                    continue
                self.value(shape, i + 1, 0)
                i += 2
                continue
            i = self.cluster(a, i)
            pattern_pending = pattern_pending and not self.pattern_given
        return self.out

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
        if args and args[0] not in ("diff", "grep") and not args[0].startswith("-"):
            return []  # the common case: no -C, no paths read outside the repository
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
    while i < n:
        a = args[i]
        if sub == "diff" and not a.startswith("-"):
            out.append(Operand(i, maybe=not no_index))
        elif sub == "grep" and a in ("-f", "--file") and i + 1 < n:
            out.append(Operand(i + 1))
            i += 1
        elif sub == "grep" and a.startswith("--file="):
            out.append(Operand(i, 7))
        i += 1
    return out
