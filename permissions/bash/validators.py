"""Per-program read-only validators for the tools whose safety depends on their arguments.

Each validator gets the literal argv after the program name and answers True only when it is
confident the invocation neither writes nor runs another program. Unsure means False.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

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


def sed_scripts(args: Sequence[str]) -> tuple[list[str], bool, bool] | None:
    """(scripts, in_place, ok) for sed args; None if an option makes it unmodelable (-f)."""
    scripts: list[str] = []
    in_place = False
    operands: list[str] = []
    i = 0
    end_opts = False
    while i < len(args):
        a = args[i]
        if end_opts or not a.startswith("-") or a == "-":
            operands.append(a)
        elif a == "--":
            end_opts = True
        elif a.startswith("--"):
            name, eq, val = a.partition("=")
            if name == "--expression":
                if eq:
                    scripts.append(val)
                elif i + 1 < len(args):
                    scripts.append(args[i + 1])
                    i += 1
            elif name in ("--in-place",):
                in_place = True
            elif name in ("--file",):
                return None
            elif name in ("--line-length",) and not eq:
                i += 1
            elif name not in (
                "--quiet",
                "--silent",
                "--regexp-extended",
                "--separate",
                "--unbuffered",
                "--null-data",
                "--posix",
                "--debug",
                "--sandbox",
                "--follow-symlinks",
                "--line-length",
            ):
                return None
        else:
            j = 1
            while j < len(a):
                ch = a[j]
                if ch == "e":
                    rest = a[j + 1 :]
                    if rest:
                        scripts.append(rest)
                    elif i + 1 < len(args):
                        scripts.append(args[i + 1])
                        i += 1
                    break
                if ch == "f":
                    return None
                if ch == "i":
                    in_place = True
                    break  # the rest is the backup suffix
                if ch == "l":
                    if not a[j + 1 :]:
                        i += 1
                    break
                if ch not in "nrEsuz":
                    return None
                j += 1
        i += 1
    if not scripts:
        if not operands:
            return None
        scripts.append(operands[0])
    return scripts, in_place, True


_SED_SIMPLE = frozenset("=dDgGhHlnNpPxzFF")
_SED_ADDR_RE = re.compile(r"\s*(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1).)*\1)")


def _sed_script_safe(script: str) -> bool:
    """Conservatively: no w/W/e/r-with-write commands, no s///w or s///e flags."""
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;":
            i += 1
        if i >= n:
            return True
        for _ in range(2):
            m = _SED_ADDR_RE.match(script, i)
            if m and m.end() > i:
                i = m.end()
                while i < n and script[i] in " \t":
                    i += 1
                if i < n and script[i] == ",":
                    i += 1
                    continue
            break
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return True
        c = script[i]
        i += 1
        if c in "{}" or c in _SED_SIMPLE:
            continue
        if c in "qQlL":
            while i < n and script[i].isdigit():
                i += 1
            continue
        if c in "btT:#":
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if c in "aic":
            while i < n and script[i] != "\n":
                if script[i] == "\\":
                    i += 1
                i += 1
            continue
        if c in "rR":
            while i < n and script[i] != "\n":
                i += 1
            continue
        if c in "sy":
            if i >= n:
                return False
            delim = script[i]
            if delim in "\\\n":
                return False
            i += 1
            for _ in range(2):
                while i < n and script[i] != delim:
                    i += 2 if script[i] == "\\" else 1
                if i >= n:
                    return False
                i += 1
            if c == "s":
                while i < n and script[i] not in ";\n}":
                    if script[i] not in "gpiImM0123456789 \t":
                        return False  # w, W, e and anything unknown
                    i += 1
            continue
        return False  # w W e v and anything unknown
    return True


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
