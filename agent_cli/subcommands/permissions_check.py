"""``nerve permissions check``: explain a permission decision without running anything.

    nerve permissions check [--mode M] [--allow R]... [--deny R]... [--ask R]... [--tool T]
                            [--cwd DIR] [--settings FILE] [--json] -- COMMAND
    nerve permissions check --jsonl FILE     (one JSON object per line in, one per line out)

Only the rules given here apply (user and project settings are not read unless ``--settings``
names a file). A malformed batch line is answered ``ask`` with the error as the reason: the
batch never stops half-way and never fails open.

A command holding control characters, escape sequences or invisible Unicode characters is
printed written out (``\\x1b``, ``\\r``, ``\\u202e``: ``tools.terminal_text.reveal``) with a
note saying so, and JSON output spells them as ``\\u`` escapes: what the terminal shows is what
was judged, never the effect of the sequences.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from permissions.types import PermissionContext, PermissionRequest, PermissionRule, Verdict

__all__ = ["build_request", "run"]

_READ_TOOLS = {
    "Read": "file_path",
    "NotebookRead": "notebook_path",
    "Glob": "path",
    "Grep": "path",
    "LS": "path",
}
_EDIT_TOOLS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nerve permissions check",
        description="Explain how Nerve would judge a tool call (nothing is run).",
    )
    p.add_argument("--mode", default=None, help="permission mode (default: default)")
    p.add_argument("--allow", action="append", default=[], metavar="RULE")
    p.add_argument("--deny", action="append", default=[], metavar="RULE")
    p.add_argument("--ask", action="append", default=[], metavar="RULE")
    p.add_argument("--tool", default="Bash", help="tool name (default: Bash)")
    p.add_argument("--cwd", default=None, help="working directory (default: the current one)")
    p.add_argument(
        "--settings",
        default=None,
        metavar="FILE",
        help="also apply the permission rules of this settings file",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--jsonl",
        default=None,
        metavar="FILE",
        help="batch: read JSON lines {id, command, allow, deny, ask?, mode?, tool?}",
    )
    p.add_argument("target", nargs="*", help="the command (Bash) or the path / URL / JSON input")
    return p


def build_request(tool: str, target: str, cwd: Path) -> PermissionRequest:
    """The request the pipeline would build for ``tool`` called on ``target``."""
    from permissions.rules import canonical_tool_name
    from permissions.types import PermissionRequest, ToolKind

    name = canonical_tool_name(tool)
    if name == "Bash":
        return PermissionRequest(name, {"command": target}, ToolKind.BASH, command=target)
    if name in _READ_TOOLS or name in _EDIT_TOOLS:
        field = _READ_TOOLS.get(name) or _EDIT_TOOLS[name]
        path = Path(os.path.normpath(cwd / Path(target).expanduser()))
        kind = ToolKind.READ if name in _READ_TOOLS else ToolKind.EDIT
        return PermissionRequest(
            name, {field: target}, kind, paths=(path,), is_read_only=kind is ToolKind.READ
        )
    if name == "WebFetch":
        return PermissionRequest(
            name, {"url": target}, ToolKind.FETCH, url=target, is_read_only=True
        )
    tool_input: dict[str, Any] = {}
    if target.strip():
        loaded = json.loads(target)
        if not isinstance(loaded, dict):
            raise ValueError(f"the input of {name} must be a JSON object")
        tool_input = loaded
    return PermissionRequest(name, tool_input, ToolKind.GENERIC, is_mcp=name.startswith("mcp__"))


def _settings_rules(path: str, cwd: Path) -> tuple[list[PermissionRule], str | None, list[str]]:
    """Rules and defaultMode of one settings file, as ``--settings`` layers them (cliArg)."""
    from config.layers import read_settings_file
    from permissions.from_settings import rules_from_strings
    from permissions.types import RuleBehavior, RuleSource

    file = Path(os.path.abspath(cwd / Path(path).expanduser()))
    layer = read_settings_file("cliArg", file, file.parent, str(file), must_exist=True)
    warnings = [layer.error] if layer is not None and layer.error else []
    warnings += list(layer.notes) if layer is not None else []
    perms = (layer.effective() if layer is not None else {}).get("permissions") or {}
    rules: list[PermissionRule] = []
    for behavior in RuleBehavior:
        found, more = rules_from_strings(
            perms.get(behavior.value) or [], behavior, RuleSource.CLI, file.parent
        )
        rules += found
        warnings += more
    mode = perms.get("defaultMode")
    return rules, mode if isinstance(mode, str) else None, warnings


def _context(
    allow: Sequence[str],
    deny: Sequence[str],
    ask: Sequence[str],
    mode: str | None,
    cwd: Path,
    base: list[PermissionRule],
) -> tuple[PermissionContext, list[str]]:
    from permissions.from_settings import rules_from_strings
    from permissions.types import PermissionContext, PermissionMode, RuleBehavior, RuleSource

    rules, warnings = list(base), []
    for behavior, texts in (
        (RuleBehavior.DENY, deny),
        (RuleBehavior.ASK, ask),
        (RuleBehavior.ALLOW, allow),
    ):
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"{behavior.value!r} must be a list of rule strings")
        found, more = rules_from_strings(texts, behavior, RuleSource.CLI, cwd)
        rules += found
        warnings += more
    parsed = PermissionMode.parse(mode) if mode else PermissionMode.DEFAULT
    return PermissionContext(
        mode=parsed, rules=tuple(rules), cwd=cwd, bypass_available=parsed is PermissionMode.BYPASS
    ), warnings


def _as_dict(v: Verdict) -> dict[str, Any]:
    return {
        "decision": v.decision.label,
        "reason": v.reason,
        "rule": str(v.rule.value) if v.rule else None,
        "source": v.rule.source.value if v.rule else None,
        "kind": v.kind.value,
        "trace": list(v.trace),
    }


def _batch(
    path: str, args: argparse.Namespace, cwd: Path, base: list[PermissionRule], out: IO[str]
) -> int:
    from permissions.engine import decide

    try:
        lines = (
            Path(path).read_text(encoding="utf-8").splitlines()
            if path != "-"
            else (sys.stdin.read().splitlines())
        )
    except (OSError, UnicodeDecodeError) as exc:
        print(f"nerve permissions check: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        case_id: Any = None
        try:
            case = json.loads(line)
            if not isinstance(case, dict):
                raise ValueError("a line must be a JSON object")
            case_id = case.get("id")
            command = case.get("command")
            if not isinstance(command, str):
                raise ValueError("'command' must be a string")
            ctx, _ = _context(
                case.get("allow") or [],
                case.get("deny") or [],
                case.get("ask") or [],
                case.get("mode") or args.mode,
                cwd,
                base,
            )
            tool = case.get("tool") or args.tool
            if not isinstance(tool, str):
                raise ValueError("'tool' must be a string")
            v = decide(build_request(tool, command, cwd), ctx)
            row = {
                "id": case_id,
                "decision": v.decision.label,
                "reason": v.reason,
                "rule": str(v.rule.value) if v.rule else None,
            }
        except Exception as exc:  # fail closed: a line we cannot judge is an "ask"
            row = {
                "id": case_id,
                "decision": "ask",
                "reason": f"line {n}: cannot judge: {type(exc).__name__}: {exc}",
                "rule": None,
            }
        out.write(_json(row) + "\n")
    out.flush()
    return 0


def _json(data: Any) -> str:
    """One JSON line; control and invisible characters as ``\\u`` escapes (same data)."""
    from tools.terminal_text import json_safe

    return json_safe(json.dumps(data, ensure_ascii=False))


def _print_text(v: Verdict, out: IO[str], command: str = "") -> None:
    from tools.terminal_text import hidden_note, reveal

    d = _as_dict(v)
    lines: list[str] = []
    if (note := hidden_note(command)) is not None:
        lines += [f"command:  {command}", f"note:     the command contains {note}"]
    lines += [f"decision: {d['decision']}", f"reason:   {d['reason']}"]
    if d["rule"]:
        lines.append(f"rule:     {d['rule']} ({d['source']})")
    lines.append(f"kind:     {d['kind']}")
    if v.suggestions:
        lines.append("suggest:  " + ", ".join(str(s) for s in v.suggestions))
    if d["trace"]:
        lines += ["trace:", *(f"  {line}" for line in d["trace"])]
    out.write("".join(reveal(line) + "\n" for line in lines))


def run(argv: Sequence[str]) -> int:
    """Entry point for ``nerve permissions ...``; returns the exit code."""
    args_in = list(argv)
    _escape_unencodable_output()
    if not args_in or args_in[0] != "check":
        print("usage: nerve permissions check [options] -- COMMAND  (see --help)", file=sys.stderr)
        return 2
    parsed = _parse_check(args_in[1:])
    if isinstance(parsed, int):
        return parsed
    args, words = parsed
    cwd = Path(os.path.abspath(args.cwd or os.getcwd()))
    base: list[PermissionRule] = []
    if args.settings:
        base, mode, warnings = _settings_rules(args.settings, cwd)
        args.mode = args.mode or mode
        _print_warnings(warnings)
    if args.jsonl:
        return _check_batch(args, cwd, base)
    if not words:
        print(
            "nerve permissions check: nothing to check (give a command after --)", file=sys.stderr
        )
        return 2
    return _check_command(args, " ".join(words), cwd, base)


def _escape_unencodable_output() -> None:
    """Commands may carry lone surrogates (JSON "\\ud800"): print them escaped, never crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _parse_check(rest: list[str]) -> tuple[argparse.Namespace, list[str]] | int:
    """The options of ``check`` and the command's words (after ``--`` or as the target), or
    the exit code when argparse stopped (``--help``, a bad option)."""
    words: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, words = rest[:cut], rest[cut + 1 :]
    try:
        args = _parser().parse_args(rest)
    except SystemExit as exc:
        return int(exc.code or 0)
    return args, [*args.target, *words]


def _print_warnings(warnings: Sequence[str]) -> None:
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


def _check_batch(args: argparse.Namespace, cwd: Path, base: list[PermissionRule]) -> int:
    """``--jsonl FILE``: rules given as flags apply to every line, beside the line's own."""
    try:
        flag_ctx, warnings = _context(args.allow, args.deny, args.ask, args.mode, cwd, base)
    except ValueError as exc:
        print(f"nerve permissions check: {exc}", file=sys.stderr)
        return 2
    _print_warnings(warnings)
    return _batch(args.jsonl, args, cwd, list(flag_ctx.rules), sys.stdout)


def _check_command(
    args: argparse.Namespace, command: str, cwd: Path, base: list[PermissionRule]
) -> int:
    """Judge one command and print the verdict, as text or ``--json``."""
    from permissions.engine import decide

    try:
        ctx, warnings = _context(args.allow, args.deny, args.ask, args.mode, cwd, base)
        request = build_request(args.tool, command, cwd)
    except ValueError as exc:
        print(f"nerve permissions check: {exc}", file=sys.stderr)
        return 2
    _print_warnings(warnings)
    verdict = decide(request, ctx)
    if args.json:
        sys.stdout.write(_json(_as_dict(verdict)) + "\n")
    else:
        _print_text(verdict, sys.stdout, request.command or "")
    return 0
