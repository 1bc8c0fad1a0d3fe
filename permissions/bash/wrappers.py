"""Wrapper commands: what runs inside ``timeout 5 X``, ``env -i X``, ``sudo X``, ``bash -c 'X'``.

Two views, on purpose different:

* ``strip_allow_wrapper`` removes only the wrappers Claude Code documents as transparent for
  allow rules and read-only classification (``timeout time nice nohup stdbuf command builtin
  noglob`` and bare ``xargs``); what remains must itself be allowed.
* ``deny_unwrap`` sees through everything that runs another command (env with flags, sudo,
  shells with ``-c``, eval, trap strings, ``find -exec``, xargs with options, ssh, watch, ...)
  so that a deny rule holds whatever the model wraps it in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "ALLOW_WRAPPERS",
    "SHELLS",
    "basename",
    "deny_unwrap",
    "strip_allow_wrapper",
]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "yash", "busybox"})
ALLOW_WRAPPERS = frozenset(
    {"timeout", "time", "nice", "nohup", "stdbuf", "command", "builtin", "noglob", "xargs"}
)


def basename(prog: str) -> str:
    return prog.rsplit("/", 1)[-1] if "/" in prog else prog


@dataclass(frozen=True, slots=True)
class _Opts:
    """The options of a wrapper. ``short_flags``/``long_flags`` are the options without a
    value; None means "not listed" (fine for the deny view, which skips any option, but the
    allow view refuses a wrapper with an option it does not know)."""

    short_value: frozenset[str] = frozenset()
    long_value: frozenset[str] = frozenset()
    positionals: int = 0  # positional words the wrapper itself consumes (timeout's DURATION)
    short_flags: frozenset[str] | None = None
    long_flags: frozenset[str] | None = None

    def resolve_long(self, name: str) -> str | None:
        """The full name of a long option or of its unique prefix (GNU getopt), else None."""
        known = self.long_value | (self.long_flags or frozenset())
        if name in known:
            return name
        hits = [k for k in known if k.startswith(name)]
        return hits[0] if len(hits) == 1 else None


_F = frozenset
_WRAPPER_OPTS: dict[str, _Opts] = {
    "timeout": _Opts(
        _F("sk"),
        _F({"--signal", "--kill-after"}),
        1,
        _F("v"),
        _F({"--foreground", "--preserve-status", "--verbose"}),
    ),
    "time": _Opts(
        _F("fo"),
        _F({"--format", "--output"}),
        0,
        _F("pvqa"),
        _F({"--portability", "--verbose", "--quiet", "--append"}),
    ),
    "nice": _Opts(_F("n"), _F({"--adjustment"}), 0, _F("0123456789"), _F()),
    "nohup": _Opts(short_flags=_F(), long_flags=_F()),
    "stdbuf": _Opts(_F("ioe"), _F({"--input", "--output", "--error"}), 0, _F(), _F()),
    "command": _Opts(short_flags=_F("pvV"), long_flags=_F()),
    "builtin": _Opts(short_flags=_F(), long_flags=_F()),
    "noglob": _Opts(short_flags=_F(), long_flags=_F()),
    "exec": _Opts(_F("a")),
    "coproc": _Opts(),
    "setsid": _Opts(),
    "unbuffer": _Opts(),
    "caffeinate": _Opts(_F("tw")),
    "ionice": _Opts(_F("cnpP"), _F({"--class", "--classdata", "--pid"})),
    "chroot": _Opts(_F(), _F({"--userspec", "--groups"}), 1),
    "taskset": _Opts(_F(), _F(), 1),
    "chrt": _Opts(_F("TPD"), _F({"--sched-runtime", "--sched-period", "--sched-deadline"}), 1),
    "doas": _Opts(_F("uC")),
    "pkexec": _Opts(_F(), _F({"--user"})),
    "sudo": _Opts(
        _F("ughpCDrtUT"),
        _F(
            {"--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role"}
            | {"--type", "--other-user", "--command-timeout"}
        ),
    ),
    "xargs": _Opts(  # -l and -i take their optional value only attached (-l5, -i{})
        _F("nLPsdEIa"),
        _F(
            {"--max-args", "--max-lines", "--max-procs", "--max-chars", "--delimiter"}
            | {"--eof", "--replace", "--arg-file", "--process-slot-var"}
        ),
    ),
    "strace": _Opts(_F("oeEpPsSuXbIa")),
    "ltrace": _Opts(_F("oeEpsuaAlLnx")),
    "env": _Opts(_F("uCS"), _F({"--unset", "--chdir", "--split-string"})),
    "watch": _Opts(_F("nq"), _F({"--interval", "--equexit"})),
    "nsenter": _Opts(_F("tSGw")),
    "unshare": _Opts(_F("SGR")),
    "flock": _Opts(_F("wEc"), _F({"--timeout", "--conflict-exit-code", "--command"}), 1),
    "systemd-run": _Opts(
        _F("upEMH"),
        _F(
            {"--unit", "--property", "--description", "--slice", "--setenv", "--machine"}
            | {"--uid", "--gid", "--host", "--working-directory", "--nice", "--service-type"}
        ),
    ),
    "proxychains": _Opts(_F("f")),
    "proxychains4": _Opts(_F("f")),
    "torsocks": _Opts(_F("uPpa")),
}


def _skip(args: Sequence[str], opts: _Opts) -> tuple[int, list[tuple[str, str | None]], bool]:
    """Index of the first operand after the wrapper's options, the options seen (long ones by
    full name), and whether every option was one ``opts`` lists."""
    seen: list[tuple[str, str | None]] = []
    known = True
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a.partition("=")
            full = opts.resolve_long(name)
            if full is None:
                known = False
                full = name
            if full in opts.long_value and not eq:
                seen.append((full, args[i + 1] if i + 1 < len(args) else None))
                i += 2
                continue
            seen.append((full, val if eq else None))
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            j = 1
            consumed_next = False
            while j < len(a):
                ch = a[j]
                if ch in opts.short_value:
                    rest = a[j + 1 :]
                    if rest:
                        seen.append(("-" + ch, rest))
                    else:
                        seen.append(("-" + ch, args[i + 1] if i + 1 < len(args) else None))
                        consumed_next = True
                    break
                if opts.short_flags is not None and ch not in opts.short_flags:
                    known = False
                seen.append(("-" + ch, None))
                j += 1
            i += 2 if consumed_next else 1
            continue
        break
    return i, seen, known


def strip_allow_wrapper(argv: Sequence[str]) -> list[str] | None:
    """One documented transparent wrapper removed, or None if ``argv`` is not one (or uses
    an option the table does not know: fail closed)."""
    if not argv:
        return None
    name = argv[0]
    if name not in ALLOW_WRAPPERS:
        return None
    opts = _WRAPPER_OPTS[name]
    i, seen, known = _skip(argv[1:], opts)
    if name == "xargs":
        return None if seen else (list(argv[1 + i :]) or None)  # only bare xargs is transparent
    flags = {f for f, _ in seen}
    if not known or (name == "command" and flags & {"-v", "-V"}):
        return None
    if name == "time" and flags & {"-o", "--output"}:
        return None  # GNU time -o writes a file
    rest = list(argv[1 + i + opts.positionals :])
    return rest or None


_GIT_GLOBALS = _Opts(
    _F("Cc"),
    _F({"--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}),
)


def _shell_script(args: Sequence[str]) -> str | None:
    """The script of ``sh [opts] -c SCRIPT``, or None."""
    i = 0
    want_script = False
    while i < len(args):
        a = args[i]
        if a in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if a == "--":
            i += 1
            break
        if (a.startswith("-") or a.startswith("+")) and len(a) > 1 and not a.startswith("--"):
            if "c" in a[1:]:
                want_script = True
            i += 1
            continue
        if a.startswith("--"):
            if a == "--command":
                want_script = True
            i += 1
            continue
        break
    if want_script and i < len(args):
        return args[i]
    return None


def _find_exec(args: Sequence[str]) -> list[list[str]]:
    out: list[list[str]] = []
    i = 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                out.append(list(args[i + 1 : j]))
            i = j
        i += 1
    return out


_Unwrapped = tuple[list[list[str]], list[str]]


def deny_unwrap(argv: Sequence[str]) -> _Unwrapped:
    """Commands run by ``argv`` one level down: (inner argvs, inner scripts to parse)."""
    if not argv:
        return [], []
    name = basename(argv[0])
    if name not in _RUNS_OTHERS:
        return [], []  # the common case: a program that runs no other command
    return _UNWRAPPERS.get(name, _unwrap_wrapper)(name, list(argv[1:]))


def _unwrap_shell(name: str, args: list[str]) -> _Unwrapped:
    """``sh -c SCRIPT``; ``busybox PROG ARGS`` runs PROG."""
    if name == "busybox" and args and not args[0].startswith("-"):
        return [args], []
    script = _shell_script(args)
    return ([], [script]) if script is not None else ([], [])


def _unwrap_eval(name: str, args: list[str]) -> _Unwrapped:
    return [], [" ".join(args)] if args else []


def _unwrap_trap(name: str, args: list[str]) -> _Unwrapped:
    """``trap 'CMD' SIGNAL``: CMD runs later."""
    rest = args[1:] if args and args[0] == "--" else args
    if rest and not rest[0].startswith("-"):
        return [], [rest[0]]
    return [], []


def _unwrap_su(name: str, args: list[str]) -> _Unwrapped:
    """``su -c CMD``, ``runuser --command=CMD``, ``script -c CMD``."""
    out: list[str] = []
    for k, a in enumerate(args):
        if a.startswith("--command="):
            out.append(a.split("=", 1)[1])
        elif k + 1 < len(args) and (
            a == "--command" or (a.startswith("-") and not a.startswith("--") and "c" in a)
        ):
            out.append(args[k + 1])
    return [], out


def _unwrap_find(name: str, args: list[str]) -> _Unwrapped:
    return _find_exec(args), []


def _unwrap_git(name: str, args: list[str]) -> _Unwrapped:
    """`git -C . -c x=y push` is still `git push` to a deny rule."""
    if not (args and args[0].startswith("-")):
        return [], []
    i, _, _ = _skip(args, _GIT_GLOBALS)
    return ([["git", *args[i:]]] if args[i:] else []), []


def _unwrap_ssh(name: str, args: list[str]) -> _Unwrapped:
    """``ssh HOST CMD...``: the remote command, as a script."""
    i, _, _ = _skip(args, _Opts(frozenset("bcDEeFIiJLlmOopQRSWw")))
    remote = args[i + 1 :]
    return ([], [" ".join(remote)]) if remote else ([], [])


def _unwrap_parallel(name: str, args: list[str]) -> _Unwrapped:
    """``parallel CMD ::: ARGS``: the command, as a script."""
    cmd = args[: args.index(":::")] if ":::" in args else args
    i, _, _ = _skip(cmd, _Opts(frozenset("jSX")))
    return ([], [" ".join(cmd[i:])]) if cmd[i:] else ([], [])


def _unwrap_wrapper(name: str, args: list[str]) -> _Unwrapped:
    """A wrapper of ``_WRAPPER_OPTS``: the command after its options (and operands), and the
    scripts its options take (``env -S``, ``flock -c``)."""
    opts = _WRAPPER_OPTS.get(name)
    if opts is None:
        return [], []
    i, seen, _ = _skip(args, opts)
    scripts = [v for f, v in seen if f in ("-S", "--split-string", "-c", "--command") and v]
    rest = args[i:]
    if name == "coproc" and len(rest) > 1 and rest[1] in ("{", "("):
        rest = rest[1:]  # `coproc NAME { cmd; }`: the name is not a command
    if name == "env":
        while rest and "=" in rest[0] and not rest[0].startswith("="):
            rest = rest[1:]
    if name == "command" and any(f in ("-v", "-V") for f, _ in seen):
        return [], []
    if name == "watch":
        return ([], [" ".join(rest)]) if rest else ([], scripts)
    rest = rest[opts.positionals :]
    if name == "flock" and rest[:1] in (["-c"], ["--command"]):
        return [], [rest[1]] if len(rest) > 1 else []  # `flock FILE -c CMD`
    if name == "flock" and scripts:
        return [], scripts
    return ([rest] if rest else []), scripts


# How each program that runs a command it names is seen through (any other wrapper of
# ``_WRAPPER_OPTS``: ``_unwrap_wrapper``).
_UNWRAPPERS: dict[str, Callable[[str, list[str]], _Unwrapped]] = {
    **dict.fromkeys(SHELLS, _unwrap_shell),
    "eval": _unwrap_eval,
    "trap": _unwrap_trap,
    "su": _unwrap_su,
    "runuser": _unwrap_su,
    "script": _unwrap_su,
    "find": _unwrap_find,
    "git": _unwrap_git,
    "ssh": _unwrap_ssh,
    "parallel": _unwrap_parallel,
}
# Every name ``deny_unwrap`` looks inside (any other program runs no command it names).
_RUNS_OTHERS = frozenset(_UNWRAPPERS) | frozenset(_WRAPPER_OPTS)
