"""Facts about one simple command, independent of rules: its argv views, read-only-ness,
what it writes, and what the analysis could not model.

``deny_forms`` are every argv bash might really run for it (seen through quoting, wrappers,
``env``, ``sudo``, ``bash -c``, ``eval``, ``xargs``, ``find -exec``, brace expansion, tracked
variables, absolute program paths); ``allow_forms`` only the argv as written, minus the
documented transparent wrappers and safe environment assignments.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from permissions.bash.parse import ParsedScript, SimpleCommand, parse_simple_commands
from permissions.bash.readonly import is_read_only_argv, safe_env_var
from permissions.bash.scan import scan_segments
from permissions.bash.validators import (
    TEST_PROGRAMS,
    sed_read_only,
    sed_scripts,
    test_operands_safe,
)
from permissions.bash.words import Word, brace_expand
from permissions.bash.wrappers import SHELLS, basename, deny_unwrap, strip_allow_wrapper

__all__ = [
    "CommandFacts",
    "analyse_command",
    "deny_forms_of_argvs",
    "deny_forms_of_command",
    "deny_forms_of_script",
    "script_prefix",
    "sed_in_place_operands",
]

MAX_DEPTH = 4
MAX_FORMS = 256
_GROUPING = frozenset({"{", "(", "!", "}", ")"})
_SAFE_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_OUTPUT_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&", "&>|"})
_BUILTINS_STATEFUL = frozenset(
    {"export", "declare", "typeset", "readonly", "local", "alias", "unalias", "unset", "set"}
    | {"shopt", "source", ".", "eval", "trap", "exec", "enable", "hash", "bind", "ulimit"}
    | {"umask", "builtin", "let", "read", "mapfile", "readarray", "getopts", "shift", "exit"}
)


@dataclass(slots=True)
class CommandFacts:
    """What one simple command is, as far as the analysis can tell."""

    cmd: SimpleCommand
    argv: list[str]
    known: bool  # every word is a literal (no expansion, glob, brace)
    core: list[str] | None  # argv after transparent wrappers (None: not modelable)
    read_only: bool = False
    problems: list[str] = field(default_factory=list)  # ANALYSIS-level doubts
    network: bool = False
    writes: list[str | None] = field(default_factory=list)  # redirect targets (None: unknown)
    allow_forms: list[str] = field(default_factory=list)
    no_suggest: bool = False
    via_xargs: bool = False  # operands come from stdin
    # read-only but for the files it writes (`echo hi > f`): an Edit rule may cover those
    reads_only: bool = False


def _redirect_facts(f: CommandFacts) -> None:
    for r in f.cmd.redirects:
        t = r.target
        text = t.shown if t is not None else ""
        if text.startswith(("/dev/tcp/", "/dev/udp/")):
            f.network = True
        if r.op not in _OUTPUT_OPS:
            continue
        if t is None or text.startswith((">(", "<(")):
            continue  # process substitution: analysed as its own command
        if r.op in (">&", "<>") and (text.isdigit() or text == "-") and t.known:
            continue
        if t.known and text in _SAFE_DEVICES:
            continue
        f.writes.append(t.value if t.known else None)


def _env_assignments_strip(argv: list[str]) -> list[str] | None:
    """``env A=1 B=2 cmd`` -> ``cmd`` when every assignment is safe and env has no flags."""
    rest = argv[1:]
    while rest and "=" in rest[0] and not rest[0].startswith(("=", "-")):
        if not safe_env_var(rest[0].split("=", 1)[0]):
            return None
        rest = rest[1:]
    if rest and rest[0].startswith("-"):
        return None
    return rest


def analyse_command(cmd: SimpleCommand, script: ParsedScript) -> CommandFacts:
    """Rule-independent facts about one simple command of ``script``."""
    words = cmd.words
    argv, known = _literal_argv(words)
    f = CommandFacts(cmd, argv, known, None)
    if cmd.redirects:
        _redirect_facts(f)
    kind = cmd.kind
    if kind == "test":
        f.read_only = test_operands_safe([w.value for w in words])
        f.core = argv
        return f
    if kind != "command":
        f.no_suggest = True
        if kind == "declaration" and words and words[0].shown in ("export", "declare", "local"):
            f.allow_forms = [" ".join(argv)]
        return f
    prog = _program_name(f, script)
    if prog is None:
        return f
    if not cmd.assignments or all(safe_env_var(n) for n, _ in cmd.assignments):
        _strip_allow_wrappers(f, prog)
    if f.core is not None:
        _core_facts(f, f.core)
    elif f.via_xargs:
        f.no_suggest = True
    if prog in _BUILTINS_STATEFUL:
        f.read_only = f.reads_only = False
        f.no_suggest = True
    return f


def _literal_argv(words: Sequence[Word]) -> tuple[list[str], bool]:
    """The argv as written (a word's text where its value is unknown), and whether every word
    is a literal."""
    # `Word.shown`/`Word.known` inlined: this runs for every word of every command
    argv: list[str] = []
    known = True
    for w in words:
        value = w[1]
        if value is None:
            argv.append(w[0])
            known = False
        else:
            argv.append(value)
            if w[3] or w[4]:
                known = False
    return argv, known


def _program_name(f: CommandFacts, script: ParsedScript) -> str | None:
    """The literal program name of ``f``; None (a problem noted) when it is computed at run
    time, has unusual characters, or is a function the script defines."""
    words = f.cmd.words
    if not words or words[0][1] is None or words[0][3] or words[0][4]:  # not `Word.known`
        problem = "the command name is computed at run time"
    else:
        prog = words[0][1] or ""
        if not (prog.isascii() and prog.isprintable() and " " not in prog and "\t" not in prog):
            problem = f"the command name {prog!r} has unusual characters"
        elif prog in script.functions:
            problem = f"{prog!r} is a shell function defined in the command"
        else:
            return prog
    f.problems.append(problem)
    f.no_suggest = True
    return None


def _strip_allow_wrappers(f: CommandFacts, prog: str) -> None:
    """``allow_forms``: the argv, then without each transparent wrapper in turn; ``core``: what
    is left (None when that is xargs: its operands come from stdin)."""
    core = f.argv
    allow_forms = [" ".join(core)]
    via_xargs = prog == "xargs"
    while True:
        nxt = strip_allow_wrapper(core)
        if nxt is None and core[0] == "env" and len(core) > 1:
            nxt = _env_assignments_strip(core)
        if not nxt:
            break
        allow_forms.append(" ".join(nxt))
        via_xargs = via_xargs or nxt[0] == "xargs"
        core = nxt
    f.allow_forms = allow_forms
    f.via_xargs = via_xargs
    f.core = None if core[0] == "xargs" else core


def _core_facts(f: CommandFacts, core: list[str]) -> None:
    """Whether the program left after the wrappers only reads, and whether a "don't ask
    again" prefix may be suggested for it."""
    head = core[0]
    ro = is_read_only_argv(core, f.known)
    if head == "env" and len(core) > 1:
        ro = False
    if ro and head in TEST_PROGRAMS:
        words = f.cmd.words
        ro = test_operands_safe([w.value for w in words[len(words) - len(core) :]])
    f.reads_only = ro and not f.via_xargs
    if ro and (f.writes or f.via_xargs):
        ro = False
    f.read_only = ro
    if script_prefix(core) is not None:
        pass  # `python3 hello.py`: the prefix names the script (see script_prefix)
    elif f.via_xargs or ("/" not in head and head in _NO_SUGGEST):
        f.no_suggest = True
    elif "/" in head and basename(head) in _NO_SUGGEST:
        f.no_suggest = True
    elif not ro and any(deny_unwrap(core)):
        f.no_suggest = True  # it runs another command: a prefix rule would cover too much


_INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "perl", "php"})


def script_prefix(argv: Sequence[str]) -> list[str] | None:
    """The "don't ask again" prefix of an interpreter running a script: ``python3 hello.py``
    -> ``python3 hello.py`` (that script, any arguments), ``python3 -m pytest`` -> ``python3
    -m pytest``. Never the bare interpreter: ``python3 *`` would allow ``python3 -c ANY``; and
    none for ``-c``/``-e`` code or other options (None)."""
    if len(argv) < 2 or argv[0] not in _INTERPRETERS:
        return None
    if argv[1] == "-m" and len(argv) > 2 and not argv[2].startswith("-"):
        return list(argv[:3])
    if argv[1].startswith("-") or argv[1] in ("", "."):
        return None
    return list(argv[:2])


_NO_SUGGEST = SHELLS | {
    "eval",
    "exec",
    "source",
    ".",
    "sudo",
    "doas",
    "su",
    "env",
    "xargs",
    "python",
    "python3",
    "node",
    "perl",
    "ruby",
    "php",
    "ssh",
    "trap",
    "script",
    "watch",
    "parallel",
    "osascript",
    "deno",
    "bun",
}


def _argv_variants(cmd: SimpleCommand) -> list[list[str]]:
    base: list[str] = []
    brace = False
    for w in cmd.words:  # deny_value, else `Word.shown`, inlined (a hot loop)
        d = w[2]
        base.append(d if d is not None else w[1] if w[1] is not None else w[0])
        brace = brace or w[4]
    out = [base]
    if brace:
        expanded: list[str] = []
        for w, b in zip(cmd.words, base, strict=True):
            expanded.extend(brace_expand(b) if w.brace else [b])
        out.append(expanded)
    if base and not base[0].isascii():
        out.append([unicodedata.normalize("NFKC", base[0]), *base[1:]])
    return out


def _forms_of_argv(argv: list[str], depth: int, out: list[list[str]]) -> None:
    while argv and argv[0] in _GROUPING:
        argv = argv[1:]  # `coproc { rm x; }` and the raw scan leave grouping words in front
    if not argv or len(out) >= MAX_FORMS:
        return
    out.append(argv)
    if "/" in argv[0]:
        out.append([basename(argv[0]), *argv[1:]])
    if depth >= MAX_DEPTH:
        return
    inners, scripts = deny_unwrap(argv)
    for inner in inners:
        _forms_of_argv(inner, depth + 1, out)
    for s in scripts:
        deny_forms_of_script(s, depth + 1, out)


def deny_forms_of_command(cmd: SimpleCommand, depth: int = 0) -> list[list[str]]:
    """Every argv a deny or ask rule should be tried against for ``cmd``."""
    out: list[list[str]] = []
    if cmd.kind not in ("command", "declaration", "unset"):
        return out
    for argv in _argv_variants(cmd):
        _forms_of_argv(argv, depth, out)
        if cmd.assignments:
            out.append([f"{n}={w.shown}" for n, w in cmd.assignments] + argv)
    if cmd.stdin_script and depth < MAX_DEPTH and cmd.words:
        prog = basename(cmd.words[0].deny_value or cmd.words[0].shown)
        if prog in SHELLS or prog in ("ssh", "sudo", "su", "xargs"):
            deny_forms_of_script(cmd.stdin_script, depth + 1, out)
    return out


def deny_forms_of_argvs(argvs: list[list[str]]) -> list[list[str]]:
    """Deny forms of raw argvs (from the fallback token scan)."""
    out: list[list[str]] = []
    for argv in argvs:
        _forms_of_argv(argv, 0, out)
    return out


def deny_forms_of_script(script: str, depth: int, out: list[list[str]]) -> None:
    """Append the deny forms of every command of a (nested) script to ``out``."""
    if depth > MAX_DEPTH or len(out) >= MAX_FORMS:
        return
    parsed = parse_simple_commands(script)
    for c in parsed.commands:
        out.extend(deny_forms_of_command(c, depth))
    if parsed.has_error or "\r" in script or "\xa0" in script:
        for seg in scan_segments(script):
            _forms_of_argv(seg, depth, out)


def sed_in_place_operands(args: list[str]) -> list[str] | None:
    """Files a ``sed -i`` edits, or None when it is not a plain in-place substitution."""
    parsed = sed_scripts(args)
    if parsed is None or not parsed[1]:
        return None
    without_i = [a for a in args if not (a.startswith("-i") or a.startswith("--in-place"))]
    if not sed_read_only(without_i):
        return None
    operands: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in ("-e", "--expression", "-l"):
            skip = True
        elif not a.startswith("-"):
            operands.append(a)
    explicit_e = any(a.startswith(("-e", "--expression")) for a in args)
    return operands if explicit_e else operands[1:]
