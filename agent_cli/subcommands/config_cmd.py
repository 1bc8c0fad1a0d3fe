"""``nerve config get|set|list [-g|--global] [KEY [VALUE]]``: settings in Claude Code's syntax.

Without ``-g`` the command works on the project's shared settings,
``<project root>/.claude/settings.json``; with ``-g`` on the user's, ``~/.claude/settings.json``
(``$CLAUDE_CONFIG_DIR/settings.json`` when that variable is set). These are the files Nerve (and
Claude Code) read as the project and user layers. A dotted KEY names a nested value
(``permissions.defaultMode``). VALUE is parsed as JSON when it is JSON (``true``, ``3``,
``["a"]``), else taken as a string. A value the settings model refuses is not written, and the
write is atomic and keeps every other key; a broken file is refused, never overwritten.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_cli.subcommands.runner import UsageError, run_subcommand

__all__ = ["ConfigUsageError", "parse_value", "run", "settings_file"]

USAGE = """\
usage: nerve config get [-g] KEY
       nerve config set [-g] KEY VALUE
       nerve config list [-g]

Without -g: the project's .claude/settings.json; with -g (--global): ~/.claude/settings.json.
KEY may be dotted (permissions.defaultMode); VALUE is JSON when it parses as JSON, else a string.
"""


class ConfigUsageError(UsageError):
    """Bad command-line input: the message says what is wrong; nothing was written."""


def settings_file(global_: bool, cwd: Path, environ: dict[str, str] | None = None) -> Path:
    """The settings file ``nerve config`` reads and writes for this scope."""
    from config.paths import find_project_root, resolve_config_dirs

    env = dict(os.environ if environ is None else environ)
    if global_:
        dirs = resolve_config_dirs(home=None, policy_dir=None, claude_policy_dir=None, environ=env)
        return dirs.claude_user / "settings.json"
    return find_project_root(cwd) / ".claude" / "settings.json"


def parse_value(text: str) -> Any:
    """JSON when ``text`` is JSON (``true``, ``42``, ``["x"]``), else ``text`` itself."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text


def _keys(key: str) -> tuple[str, ...]:
    parts = tuple(key.split("."))
    if not key or not all(parts):
        raise ConfigUsageError(f"invalid key {key!r}: expected NAME or NAME.NAME")
    return parts


def _read(path: Path) -> dict[str, Any]:
    from config.writer import read_json_object

    return read_json_object(path)


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _get(path: Path, key: str) -> int:
    node: Any = _read(path)
    for part in _keys(key):
        if not isinstance(node, dict) or part not in node:
            print(f"{key} is not set in {path}", file=sys.stderr)
            return 1
        node = node[part]
    print(_show(node))
    return 0


def _check_value(path: Path, keys: tuple[str, ...], value: Any) -> None:
    """Refuse a value the settings model would reject (the loader would ignore the file)."""
    from config.layers import parse_settings_text

    candidate: dict[str, Any] = {}
    node = candidate
    for part in keys[:-1]:
        node = node.setdefault(part, {})
    node[keys[-1]] = value
    parsed = parse_settings_text(json.dumps(candidate), str(path))
    problem = parsed.error or next(iter(parsed.notes), None)
    if problem:
        # the candidate has one line, so positions in it mean nothing to the user
        reason = re.sub(rf"^{re.escape(str(path))}:1:\d+: ", "", problem.strip(), flags=re.M)
        raise ConfigUsageError(f"invalid value for {'.'.join(keys)} ({path}): {reason}")


def _valid(path: Path, keys: tuple[str, ...], value: Any) -> bool:
    try:
        _check_value(path, keys, value)
    except ConfigUsageError:
        return False
    return True


def _set(path: Path, key: str, text: str) -> int:
    from config.writer import set_settings_value

    keys = _keys(key)
    value = parse_value(text)
    try:
        _check_value(path, keys, value)
    except ConfigUsageError:
        # `config set model 5`: the key wants a string, and the text is one
        if isinstance(value, str) or not _valid(path, keys, text):
            raise
        value = text
    changed = set_settings_value(path, keys, value)
    state = "Set" if changed else "Unchanged:"
    print(f"{state} {key} = {json.dumps(value, ensure_ascii=False)} in {path}")
    return 0


def _list(path: Path) -> int:
    print(json.dumps(_read(path), indent=2, ensure_ascii=False))
    return 0


def _dispatch(args: list[str], cwd: Path) -> int:
    global_ = False
    rest: list[str] = []
    for token in args[1:]:
        if token in ("-g", "--global"):
            global_ = True
        elif token.startswith("-") and token != "-" and not _is_number(token):
            raise ConfigUsageError(f"unknown option {token!r}")
        else:
            rest.append(token)
    path = settings_file(global_, cwd)
    command = args[0]
    if command == "get" and len(rest) == 1:
        return _get(path, rest[0])
    if command == "set" and len(rest) == 2:
        return _set(path, rest[0], rest[1])
    if command == "list" and not rest:
        return _list(path)
    raise ConfigUsageError(f"unknown or malformed command: config {' '.join(args)}")


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def run(argv: Sequence[str]) -> int:
    """Entry point of ``nerve config``; 0 on success, 1 when it could not be done, 2 on bad usage."""
    return run_subcommand("config", USAGE, argv, _dispatch)
