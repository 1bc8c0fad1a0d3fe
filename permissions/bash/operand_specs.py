"""Per-program operand tables (data): which options take a value, and what that value is.

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

from dataclasses import dataclass, field

__all__ = [
    "NAMES_ONLY",
    "NAMES_ONLY_EXEC",
    "RECURSIVE",
    "RECURSIVE_READERS",
    "SPECS",
    "TAR_PROGRAMS",
    "OperandSpec",
    "RecursiveSpec",
]


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


# ---------------------------------------------------------------- recursive reads
#
# A ``Read`` deny rule guards the *contents* of files. A program handed a folder that reads the
# contents of everything below it (``grep -r x .``) may read a file such a rule covers without
# naming it: the path check then asks (``permissions.bash.pathcheck``). Programs that print only
# names, sizes or other metadata of what is below a folder (``ls -R``, ``find`` without
# ``-exec``, ``tree``, ``du``, ``fd`` without ``-x``, ``rg --files``) are left out on purpose: a
# Read rule never hid names (``ls secrets`` is allowed too), and asking for every ``ls -R``
# would make the rule a nuisance.


@dataclass(frozen=True, slots=True)
class RecursiveSpec:
    """How one program reads the contents of whole folders.

    ``flags``: options that make it recurse (``-r``, ``--recursive``); empty: it always does.
    ``flag_values``: an option whose value makes it recurse (``grep -d recurse``).
    ``names_only``: options under which it reads no contents at all (``rg --files``).
    ``values``: option shapes (as in :class:`OperandSpec`) of a program without an operand
    table in ``SPECS``. ``sources``: which operands it reads: ``all``, ``but_last`` (``cp SRC...
    DEST``; all of them with ``target``), ``after_first`` (``zip ARCHIVE FILE...``).
    ``default_cwd``: with no folder operand it reads the working directory (``rg x``).
    ``remote``: ``host:path`` operands are on another machine, not local paths.
    ``target``: options naming the destination, so that every operand is a source.
    ``stdin_first``: with no folder operand it reads stdin instead when that is a pipe or a
    file (ripgrep; the Bash tool's own stdin is /dev/null, so ``rg x`` alone reads ``.``).
    """

    flags: frozenset[str]
    flag_values: dict[str, str] = field(default_factory=dict)
    names_only: frozenset[str] = frozenset()
    values: dict[str, str] = field(default_factory=dict)
    sources: str = "all"
    default_cwd: bool = False
    remote: bool = False
    target: frozenset[str] = frozenset()
    stdin_first: bool = False


_GREP_RECURSIVE = RecursiveSpec(
    frozenset({"-r", "-R", "--recursive", "--dereference-recursive"}),
    {"-d": "recurse", "--directories": "recurse"},
    default_cwd=True,  # GNU grep -r without a file searches "."
)

RECURSIVE: dict[str, RecursiveSpec] = {
    "grep": _GREP_RECURSIVE,
    "egrep": _GREP_RECURSIVE,
    "fgrep": _GREP_RECURSIVE,
    "rg": RecursiveSpec(
        frozenset(),  # ripgrep always recurses
        names_only=frozenset(
            {"--files", "--type-list", "-h", "--help", "-V", "--version", "--pcre2-version"}
            | {"--generate"}
        ),
        default_cwd=True,
        stdin_first=True,
    ),
    "diff": RecursiveSpec(frozenset({"-r", "--recursive"})),
    # Not read-only, so they ask in the default mode anyway; but acceptEdits allows `cp -r`
    # inside the working dirs and bypass allows all four: the copy could then be read.
    "cp": RecursiveSpec(
        frozenset({"-r", "-R", "-a", "--recursive", "--archive"}),
        values=_o("-S:v -t:v --suffix:v --target-directory:v"),
        sources="but_last",
        target=frozenset({"-t", "--target-directory"}),
    ),
    "rsync": RecursiveSpec(
        frozenset({"-r", "-a", "--recursive", "--archive"}),
        values=_o(
            "-e:v -f:v -B:v -T:v -M:v --rsh:v --filter:v --exclude:v --include:v "
            "--exclude-from:v --include-from:v --files-from:i --rsync-path:v --log-file:v "
            "--password-file:v --temp-dir:v --compare-dest:v --copy-dest:v --link-dest:v "
            "--backup-dir:v --suffix:v --chmod:v --chown:v --timeout:v --contimeout:v "
            "--port:v --bwlimit:v --max-size:v --min-size:v --partial-dir:v --out-format:v "
            "--block-size:v --remote-option:v --info:v --debug:v --usermap:v --groupmap:v "
            "--iconv:v --max-delete:v --modify-window:v --compress-level:v --skip-compress:v "
            "--sockopts:v --address:v --protocol:v --write-batch:v --read-batch:v "
            "--only-write-batch:v --checksum-choice:v --compress-choice:v --log-file-format:v"
        ),
        sources="but_last",
        remote=True,
    ),
    "scp": RecursiveSpec(
        frozenset({"-r"}),
        values=_o("-c:v -D:v -F:v -i:v -J:v -l:v -o:v -P:v -S:v -X:v"),
        sources="but_last",
        remote=True,
    ),
    "zip": RecursiveSpec(
        frozenset({"-r", "-R", "--recurse-paths", "--recurse-patterns"}),
        values=_o("-b:v -n:v -t:v -P:v -O:v -Z:v --out:v --password:v --temp-path:v --suffixes:v"),
        sources="after_first",
    ),
}

# Read folders recursively too, with grammars of their own (permissions.bash.recursive):
# `tar c` (and r/u/A), `git grep`, `find ... -exec`, `fd ... -x`.
TAR_PROGRAMS = frozenset({"tar", "gtar", "bsdtar"})
RECURSIVE_READERS: frozenset[str] = frozenset(RECURSIVE) | TAR_PROGRAMS | {"git", "find", "fd"}

# Programs of SPECS whose operands are read for names or metadata only: a glob operand of
# theirs reaching a Read-denied file reveals no contents (`ls secrets/*` is judged as a path,
# as before, but its pattern is not matched against the rules).
NAMES_ONLY = frozenset(
    {"ls", "tree", "du", "stat", "realpath", "readlink", "cd", "pushd", "find", "fd", "date"}
)
# Programs `find -exec` / `fd -x` may run on each file without reading its contents.
NAMES_ONLY_EXEC = NAMES_ONLY | {"echo", "printf", "basename", "dirname", "true", "test", "["}
