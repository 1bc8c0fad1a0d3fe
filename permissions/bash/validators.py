"""Per-program read-only validators for the tools whose safety depends on their arguments.

Each validator gets the literal argv after the program name and answers True only when it is
confident the invocation neither writes nor runs another program. Unsure means False.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from permissions.bash.git import git_read_only

__all__ = [
    "TEST_PROGRAMS",
    "VALIDATORS",
    "awk_read_only",
    "find_read_only",
    "git_read_only",
    "sed_read_only",
    "sed_scripts",
    "test_operands_safe",
]

TEST_PROGRAMS = frozenset({"test", "[", "[["})


def test_operands_safe(values: Sequence[str | None]) -> bool:
    """``[[ X -eq 1 ]]`` and ``test -v X`` evaluate X as an arithmetic expression or a variable
    reference, whose array subscript is expanded: a literal ``a[$(cmd)]`` runs ``cmd``."""
    return not any(v is not None and "[" in v and ("$" in v or "`" in v) for v in values)


# ---------------------------------------------------------------- sed


@dataclass(slots=True)
class _SedArgs:
    """What sed's options say so far: its scripts, ``-i``, and the operands."""

    scripts: list[str] = field(default_factory=list)
    in_place: bool = False
    operands: list[str] = field(default_factory=list)


_SED_LONG_FLAGS = frozenset(
    {"--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered", "--null-data"}
    | {"--posix", "--debug", "--sandbox", "--follow-symlinks", "--line-length"}
)


def sed_scripts(args: Sequence[str]) -> tuple[list[str], bool, bool] | None:
    """(scripts, in_place, ok) for sed args; None if an option makes it unmodelable (-f)."""
    sed = _SedArgs()
    i = 0
    end_opts = False
    while i < len(args):
        a = args[i]
        if end_opts or not a.startswith("-") or a == "-":
            sed.operands.append(a)
        elif a == "--":
            end_opts = True
        else:
            option = _sed_long_option if a.startswith("--") else _sed_short_options
            last = option(sed, args, i)
            if last is None:
                return None
            i = last
        i += 1
    if not sed.scripts:
        if not sed.operands:
            return None
        sed.scripts.append(sed.operands[0])
    return sed.scripts, sed.in_place, True


def _sed_long_option(sed: _SedArgs, args: Sequence[str], i: int) -> int | None:
    """Take the long option ``args[i]``: the index of the last word it uses; None when sed
    cannot be modelled with it (``--file``, an unknown option)."""
    name, eq, val = args[i].partition("=")
    if name == "--expression":
        if eq:
            sed.scripts.append(val)
        elif i + 1 < len(args):
            sed.scripts.append(args[i + 1])
            return i + 1
    elif name == "--in-place":
        sed.in_place = True
    elif name == "--file":
        return None
    elif name == "--line-length" and not eq:
        return i + 1
    elif name not in _SED_LONG_FLAGS:
        return None
    return i


def _sed_short_options(sed: _SedArgs, args: Sequence[str], i: int) -> int | None:
    """Take the short-option cluster ``args[i]`` (``-ne``, ``-i.bak``): the index of the last
    word it uses; None when sed cannot be modelled with it (``-f``, an unknown option)."""
    a = args[i]
    for j in range(1, len(a)):
        ch = a[j]
        if ch == "e":
            rest = a[j + 1 :]
            if rest:
                sed.scripts.append(rest)
            elif i + 1 < len(args):
                sed.scripts.append(args[i + 1])
                return i + 1
            return i
        if ch == "f":
            return None
        if ch == "i":
            sed.in_place = True
            return i  # the rest is the backup suffix
        if ch == "l":
            return i if a[j + 1 :] else i + 1
        if ch not in "nrEsuz":
            return None
    return i


_SED_SIMPLE = frozenset("=dDgGhHlnNpPxzFF")
_SED_ADDR_RE = re.compile(r"\s*(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1).)*\1)")


def _sed_script_safe(script: str) -> bool:
    """Conservatively: no w/W/e/r-with-write commands, no s///w or s///e flags."""
    i, n = 0, len(script)
    while i < n:
        i = _skip_chars(script, i, " \t\n;")
        if i >= n:
            return True
        i = _skip_chars(script, _sed_addresses(script, i), " \t!")
        if i >= n:
            return True
        command = _SED_COMMANDS.get(script[i])
        if command is None:
            return False  # w W e v and anything unknown
        i = command(script, i + 1)
        if i < 0:
            return False
    return True


def _skip_chars(script: str, i: int, chars: str) -> int:
    """The index of the first character from ``i`` on that is not one of ``chars``."""
    n = len(script)
    while i < n and script[i] in chars:
        i += 1
    return i


def _sed_addresses(script: str, i: int) -> int:
    """The index after the (up to two, comma-separated) addresses at ``i``."""
    n = len(script)
    for _ in range(2):
        m = _SED_ADDR_RE.match(script, i)
        if not (m and m.end() > i):
            break
        i = _skip_chars(script, m.end(), " \t")
        if not (i < n and script[i] == ","):
            break
        i += 1
    return i


# Each sed command takes the script and the index after its letter, and answers the index
# after its arguments, or -1 when the command may write or run something.


def _sed_no_argument(script: str, i: int) -> int:
    return i


def _sed_count(script: str, i: int) -> int:
    """``q5``, ``l 70``: an optional number."""
    n = len(script)
    while i < n and script[i].isdigit():
        i += 1
    return i


def _sed_label(script: str, i: int) -> int:
    """``b label``, ``: label``, ``# comment``: up to the end of the command."""
    n = len(script)
    while i < n and script[i] not in ";\n":
        i += 1
    return i


def _sed_text(script: str, i: int) -> int:
    """``a``/``i``/``c`` text: up to an unescaped newline."""
    n = len(script)
    while i < n and script[i] != "\n":
        if script[i] == "\\":
            i += 1
        i += 1
    return i


def _sed_read_file(script: str, i: int) -> int:
    """``r FILE``: the file name runs to the end of the line (it only reads)."""
    n = len(script)
    while i < n and script[i] != "\n":
        i += 1
    return i


def _sed_replace(script: str, i: int, flags: bool) -> int:
    """``s/a/b/FLAGS`` (``flags``) or ``y/abc/xyz/``: -1 for a flag that writes or runs."""
    n = len(script)
    if i >= n:
        return -1
    delim = script[i]
    if delim in "\\\n":
        return -1
    i += 1
    for _ in range(2):
        while i < n and script[i] != delim:
            i += 2 if script[i] == "\\" else 1
        if i >= n:
            return -1
        i += 1
    if not flags:
        return i
    while i < n and script[i] not in ";\n}":
        if script[i] not in "gpiImM0123456789 \t":
            return -1  # w, W, e and anything unknown
        i += 1
    return i


def _sed_substitute(script: str, i: int) -> int:
    return _sed_replace(script, i, True)


def _sed_transliterate(script: str, i: int) -> int:
    return _sed_replace(script, i, False)


def _sed_command_table() -> dict[str, Callable[[str, int], int]]:
    table: dict[str, Callable[[str, int], int]] = {}
    for letters, command in (
        ("{}", _sed_no_argument),
        (_SED_SIMPLE, _sed_no_argument),
        ("qQlL", _sed_count),
        ("btT:#", _sed_label),
        ("aic", _sed_text),
        ("rR", _sed_read_file),
        ("s", _sed_substitute),
        ("y", _sed_transliterate),
    ):
        for letter in letters:
            table.setdefault(letter, command)  # the first class a letter is in wins (`l`)
    return table


_SED_COMMANDS = _sed_command_table()


def sed_read_only(args: Sequence[str]) -> bool:
    parsed = sed_scripts(args)
    if parsed is None:
        return False
    scripts, in_place, _ = parsed
    return not in_place and all(_sed_script_safe(s) for s in scripts)


# ---------------------------------------------------------------- awk

_AWK_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_AWK_PRINT_REDIRECT_RE = re.compile(r"\bprintf?\b[^;}\n]*>")


def _awk_program_safe(prog: str) -> bool:
    code = _AWK_STRING_RE.sub('""', prog)
    if re.search(r"\b(system|getline|close|fflush)\b|@", code):
        return False
    if "|" in code.replace("||", ""):
        return False
    return not _AWK_PRINT_REDIRECT_RE.search(code)


def awk_read_only(args: Sequence[str]) -> bool:
    i = 0
    program: str | None = None
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a in ("-F", "-v"):
            i += 2
            continue
        if a.startswith("-F") or a.startswith("-v"):
            i += 1
            continue
        if a.startswith("-"):
            return False  # -f progfile, -i inplace, -E, -l, --source, ...: not modelled
        break
    if i < len(args):
        program = args[i]
    return program is not None and _awk_program_safe(program)


# ---------------------------------------------------------------- find

_FIND_UNSAFE = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


def find_read_only(args: Sequence[str]) -> bool:
    return not any(a in _FIND_UNSAFE for a in args)


VALIDATORS: dict[str, Callable[[Sequence[str]], bool]] = {
    "sed": sed_read_only,
    "awk": awk_read_only,
    "gawk": awk_read_only,
    "mawk": awk_read_only,
    "nawk": awk_read_only,
    "find": find_read_only,
    "git": git_read_only,
}
