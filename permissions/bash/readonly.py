"""Which simple commands are read-only: per-program tables (data) plus a few validators.

A program is read-only only if it is in ``PROGRAMS`` (or ``VALIDATORS``) and none of its
unsafe flags or operand limits is hit. Combined short flags (``-rf``), ``--flag=value`` and
``--flag value`` and ``--`` are understood. Arguments that cannot be known statically (``$x``,
unquoted globs) are accepted only for programs with no unsafe flag at all: a glob or variable
could otherwise expand to ``--pre=cmd``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from permissions.bash.git import git_env_var
from permissions.bash.validators import VALIDATORS

__all__ = ["PROGRAMS", "SAFE_ENV_VARS", "ProgramSpec", "is_read_only_argv", "safe_env_var"]


@dataclass(frozen=True, slots=True)
class ProgramSpec:
    """Read-only rules for one program.

    ``unsafe_short``/``unsafe_long``: flags that write or execute. ``short_value``: short flags
    that take a value (so ``-n5`` or ``-o x`` are parsed right). ``max_operands``: more
    operands than this means an output file (``uniq in out``). ``operand_check``: "none",
    "no-operands" (``hostname NAME`` sets it), "date" (``date MMDDhhmm`` sets the clock).
    """

    unsafe_short: frozenset[str] = frozenset()
    unsafe_long: frozenset[str] = frozenset()
    short_value: frozenset[str] = frozenset()
    long_value: frozenset[str] = frozenset()
    max_operands: int | None = None
    operand_check: str = "none"
    plus_args_unsafe: bool = False

    @property
    def strict(self) -> bool:
        """True when an unknowable argument could turn the call unsafe."""
        return bool(
            self.unsafe_short
            or self.unsafe_long
            or self.max_operands is not None
            or self.operand_check != "none"
            or self.plus_args_unsafe
        )


_PLAIN = ProgramSpec()


def _spec(**kw: object) -> ProgramSpec:
    sets = ("unsafe_short", "unsafe_long", "short_value", "long_value")
    fixed = {k: frozenset(v) if k in sets else v for k, v in kw.items()}  # type: ignore[call-overload]
    return ProgramSpec(**fixed)  # type: ignore[arg-type]


PROGRAMS: dict[str, ProgramSpec] = {
    **{
        name: _PLAIN
        for name in (
            "ls cat head tail wc pwd echo true false test [ [[ : which whoami id uname "
            "basename dirname realpath readlink stat du df diff cmp comm grep egrep fgrep tr "
            "cut paste column nl fold fmt rev tac od hexdump strings md5sum sha1sum sha224sum "
            "sha256sum sha384sum sha512sum b2sum cksum sum jq printenv expr seq sleep type "
            "groups nproc arch tty uptime cal numfmt join expand unexpand ps pgrep free who "
            "w locale getconf lsb_release cd pushd popd dirs env command"
        ).split()
    },
    "printf": _spec(unsafe_short="v"),
    "date": _spec(unsafe_short="s", unsafe_long={"--set"}, short_value="fdr", operand_check="date"),
    "hostname": _spec(
        unsafe_short="bF", unsafe_long={"--boot", "--file"}, operand_check="no-operands"
    ),
    "file": _spec(unsafe_short="C", unsafe_long={"--compile"}, short_value="mfFeP"),
    # -R with -H re-runs tree in every directory, writing 00Tree.html files
    "tree": _spec(unsafe_short="oR", short_value="LPIH", long_value={"--filelimit"}),
    "sort": _spec(
        unsafe_short="o",
        unsafe_long={"--output", "--compress-program"},
        short_value="kStT",
        long_value={"--key", "--buffer-size", "--field-separator", "--temporary-directory"},
    ),
    "shuf": _spec(unsafe_short="o", unsafe_long={"--output", "--random-source"}, short_value="nin"),
    "uniq": _spec(short_value="fsw", max_operands=1),
    "xxd": _spec(short_value="cglsonC", max_operands=1),
    "base64": _spec(unsafe_short="o", unsafe_long={"--output"}, short_value="bwi", max_operands=1),
    "rg": _spec(
        unsafe_short="z",
        unsafe_long={"--pre", "--hostname-bin", "--search-zip"},
        short_value="efgmABCtTMjrEd",
        long_value={"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not"},
    ),
    "less": _spec(
        unsafe_short="oOk",
        unsafe_long={"--log-file", "--LOG-FILE", "--lesskey-file", "--lesskey-src"},
        short_value="bhjpPxyz",
        plus_args_unsafe=True,
    ),
    "more": _spec(plus_args_unsafe=True),
    "yq": _spec(unsafe_short="i", unsafe_long={"--inplace", "--split-exp"}),
    "fd": _spec(
        unsafe_short="xX",
        unsafe_long={"--exec", "--exec-batch"},
        short_value="edtEcjS",
        long_value={"--extension", "--max-depth", "--type", "--exclude", "--size"},
    ),
}

# Environment variables that cannot make a read-only program run code or write.
SAFE_ENV_VARS = frozenset(
    {"LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS", "LINES"}
    | {"CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "GREP_COLOR", "GREP_COLORS", "LS_COLORS"}
    | {"POSIXLY_CORRECT", "TIME_STYLE", "BLOCK_SIZE", "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG"}
    | {"PYTHONUNBUFFERED", "CI", "DEBUG", "VERBOSE"}
)


def safe_env_var(name: str) -> bool:
    # A variable git reads (GIT_*, HOME, XDG_CONFIG_HOME, PAGER, ...) is never safe, whatever
    # the table above says: it could point git at configuration the model wrote.
    if git_env_var(name):
        return False
    return name in SAFE_ENV_VARS or name.startswith("LC_")


def _flags_ok(spec: ProgramSpec, args: Sequence[str]) -> tuple[bool, list[str]]:
    """(no unsafe flag, operands)."""
    operands: list[str] = []
    i = 0
    end = False
    while i < len(args):
        a = args[i]
        i += 1
        if end or a == "-" or not a.startswith("-"):
            if spec.plus_args_unsafe and a.startswith("+"):
                return False, operands
            operands.append(a)
            continue
        if a == "--":
            end = True
            continue
        if a.startswith("--"):
            name, eq, _ = a.partition("=")
            if name in spec.unsafe_long:
                return False, operands
            # unambiguous prefixes of unsafe long options work in GNU getopt (--outp=x)
            if len(name) > 2 and any(u.startswith(name) for u in spec.unsafe_long):
                return False, operands
            if name in spec.long_value and not eq:
                i += 1
            continue
        for j in range(1, len(a)):
            ch = a[j]
            if ch in spec.unsafe_short:
                return False, operands
            if ch in spec.short_value:
                if j == len(a) - 1:
                    i += 1
                break
    return True, operands


def is_read_only_argv(argv: Sequence[str], all_known: bool = True) -> bool:
    """True when ``argv`` (program name first, wrappers already removed) only reads."""
    if not argv:
        return False
    prog, args = argv[0], argv[1:]
    validator = VALIDATORS.get(prog)
    if validator is not None:
        return all_known and validator(args)
    spec = PROGRAMS.get(prog)
    if spec is None:
        return False
    if not all_known and spec.strict:
        return False
    ok, operands = _flags_ok(spec, args)
    if not ok:
        return False
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        return False
    if spec.operand_check == "no-operands" and operands:
        return False
    if spec.operand_check == "date" and any(not o.startswith("+") for o in operands):
        return False
    return True
