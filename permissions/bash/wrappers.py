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

from collections.abc import Sequence
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
    short_value: frozenset[str] = frozenset()
    long_value: frozenset[str] = frozenset()
    positionals: int = 0  # positional words the wrapper itself consumes (timeout's DURATION)


_WRAPPER_OPTS: dict[str, _Opts] = {
    "timeout": _Opts(frozenset("sk"), frozenset({"--signal", "--kill-after"}), 1),
    "time": _Opts(frozenset("fo"), frozenset({"--format", "--output"})),
    "nice": _Opts(frozenset("n"), frozenset({"--adjustment"})),
    "nohup": _Opts(),
    "stdbuf": _Opts(frozenset("ioe"), frozenset({"--input", "--output", "--error"})),
    "command": _Opts(),
    "builtin": _Opts(),
    "noglob": _Opts(),
    "exec": _Opts(frozenset("a")),
    "coproc": _Opts(),
    "setsid": _Opts(),
    "unbuffer": _Opts(),
    "caffeinate": _Opts(frozenset("tw")),
    "ionice": _Opts(frozenset("cnpP"), frozenset({"--class", "--classdata", "--pid"})),
    "chroot": _Opts(frozenset(), frozenset({"--userspec", "--groups"}), 1),
    "taskset": _Opts(frozenset(), frozenset(), 1),
    "doas": _Opts(frozenset("uC")),
    "sudo": _Opts(
        frozenset("ughpCDrtUT"),
        frozenset(
            {"--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role"}
            | {"--type", "--other-user", "--command-timeout"}
        ),
    ),
    "xargs": _Opts(
        frozenset("nLPsdEIal"),
        frozenset(
            {"--max-args", "--max-lines", "--max-procs", "--max-chars", "--delimiter"}
            | {"--eof", "--replace", "--arg-file", "--process-slot-var"}
        ),
    ),
    "strace": _Opts(frozenset("oeEpPsSuXbIa")),
    "ltrace": _Opts(frozenset("oeEpsuaAlLnx")),
    "env": _Opts(frozenset("uCS"), frozenset({"--unset", "--chdir", "--split-string"})),
    "watch": _Opts(frozenset("nq"), frozenset({"--interval", "--equexit"})),
    "nsenter": _Opts(frozenset("tSGw")),
    "flock": _Opts(frozenset("wEc"), frozenset({"--timeout", "--conflict-exit-code"}), 1),
}


def _skip(args: Sequence[str], opts: _Opts) -> tuple[int, list[tuple[str, str | None]]]:
    """Index of the first operand after the wrapper's options; also the options seen."""
    seen: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a.partition("=")
            if name in opts.long_value and not eq:
                seen.append((name, args[i + 1] if i + 1 < len(args) else None))
                i += 2
                continue
            seen.append((name, val if eq else None))
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
                seen.append(("-" + ch, None))
                j += 1
            i += 2 if consumed_next else 1
            continue
        break
    return i, seen


def strip_allow_wrapper(argv: Sequence[str]) -> list[str] | None:
    """One documented transparent wrapper removed, or None if ``argv`` is not one."""
    if not argv:
        return None
    name = argv[0]
    if name not in ALLOW_WRAPPERS:
        return None
    opts = _WRAPPER_OPTS[name]
    i, seen = _skip(argv[1:], opts)
    flags = {f for f, _ in seen}
    if name == "command" and flags & {"-v", "-V"}:
        return None
    if name == "time" and flags & {"-o", "--output"}:
        return None  # GNU time -o writes a file
    if name == "xargs" and seen:
        return None  # only bare xargs is transparent
    rest = list(argv[1 + i + opts.positionals :])
    return rest or None


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


def deny_unwrap(argv: Sequence[str]) -> tuple[list[list[str]], list[str]]:
    """Commands run by ``argv`` one level down: (inner argvs, inner scripts to parse)."""
    if not argv:
        return [], []
    name = basename(argv[0])
    args = list(argv[1:])
    if name in SHELLS:
        if name == "busybox" and args and not args[0].startswith("-"):
            return [args], []
        script = _shell_script(args)
        return ([], [script]) if script is not None else ([], [])
    if name == "eval":
        return [], [" ".join(args)] if args else []
    if name == "trap":
        rest = args[1:] if args and args[0] == "--" else args
        if rest and not rest[0].startswith("-"):
            return [], [rest[0]]
        return [], []
    if name in ("su", "runuser", "script"):
        out: list[str] = []
        for k, a in enumerate(args):
            if a.startswith("--command="):
                out.append(a.split("=", 1)[1])
            elif k + 1 < len(args) and (
                a == "--command" or (a.startswith("-") and not a.startswith("--") and "c" in a)
            ):
                out.append(args[k + 1])
        return [], out
    if name == "find":
        return _find_exec(args), []
    if name == "git" and args and args[0].startswith("-"):
        # `git -C . -c x=y push` is still `git push` to a deny rule
        i, _ = _skip(args, _Opts(frozenset("Cc"), frozenset({"--git-dir", "--work-tree"})))
        return ([["git", *args[i:]]] if args[i:] else []), []
    if name == "ssh":
        i, _ = _skip(args, _Opts(frozenset("bcDEeFIiJLlmOopQRSWw")))
        remote = args[i + 1 :]
        return ([], [" ".join(remote)]) if remote else ([], [])
    if name == "parallel":
        cmd = args[: args.index(":::")] if ":::" in args else args
        i, _ = _skip(cmd, _Opts(frozenset("jSX")))
        return ([], [" ".join(cmd[i:])]) if cmd[i:] else ([], [])
    opts = _WRAPPER_OPTS.get(name)
    if opts is None:
        return [], []
    i, seen = _skip(args, opts)
    scripts = [v for f, v in seen if f in ("-S", "--split-string", "-c") and v]
    rest = args[i:]
    if name == "env":
        while rest and "=" in rest[0] and not rest[0].startswith("="):
            rest = rest[1:]
    if name == "command" and any(f in ("-v", "-V") for f, _ in seen):
        return [], []
    if name == "watch":
        return ([], [" ".join(rest)]) if rest else ([], scripts)
    rest = rest[opts.positionals :]
    if name == "flock" and scripts:
        return [], scripts
    return ([rest] if rest else []), scripts
