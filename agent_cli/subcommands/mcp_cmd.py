"""``nerve mcp add|add-json|list|get|remove``: MCP servers in Claude Code's syntax and files.

    nerve mcp add [-t|--transport stdio|http|sse] [-s|--scope local|project|user]
                  [-e KEY=VALUE]... [-H 'Name: value']... NAME COMMAND-OR-URL [ARGS...]
    nerve mcp add-json [-s SCOPE] NAME JSON
    nerve mcp list
    nerve mcp get NAME
    nerve mcp remove [-s SCOPE] NAME

Where each scope lives (the files ``tools.mcp.config`` reads):

* local (default) — ``~/.claude.json`` → ``projects[<project root>].mcpServers``;
* project — ``<project root>/.mcp.json`` ``mcpServers`` (committed; needs approval to start);
* user — ``~/.claude.json`` top-level ``mcpServers``.

``~/.claude.json`` is ``$CLAUDE_CONFIG_DIR/.claude.json`` when that variable is set. Writes are
atomic and keep every other key of the file; a broken file is refused, never overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from agent_cli.subcommands.runner import UsageError, run_subcommand
from tools.records import datarecord

__all__ = ["McpUsageError", "ScopeFile", "parse_add", "run", "scope_file", "validate_entry"]

USAGE = """\
usage: nerve mcp add [-t stdio|http|sse] [-s local|project|user] [-e KEY=VALUE]...
                     [-H 'Name: value']... NAME COMMAND-OR-URL [ARGS...]
       nerve mcp add-json [-s SCOPE] NAME JSON
       nerve mcp list
       nerve mcp get NAME
       nerve mcp remove [-s SCOPE] NAME

Put -- before a command whose arguments start with '-':
  nerve mcp add files -e ROOT=/tmp -- npx -y @modelcontextprotocol/server-filesystem .
"""

SCOPES = ("local", "project", "user")
_SCOPE_TEXT = {
    "local": "Local config (private to you in this project)",
    "project": "Project config (shared via .mcp.json)",
    "user": "User config (available in all your projects)",
}


class McpUsageError(UsageError):
    """Bad command-line input: the message says what is wrong; nothing was written."""


@datarecord(frozen=True)
class ScopeFile:
    """The JSON file of one scope and the key path of its ``mcpServers`` object in it."""

    scope: str
    path: Path
    keys: tuple[str, ...]

    def servers(self) -> dict[str, Any]:
        """The raw ``mcpServers`` entries (empty when the file or the key is absent)."""
        from config.writer import read_json_object

        node: Any = read_json_object(self.path)
        for key in self.keys:
            node = node.get(key) if isinstance(node, dict) else None
        return dict(node) if isinstance(node, dict) else {}


def _project_root(cwd: Path) -> Path:
    from config.paths import find_project_root

    return find_project_root(cwd)


def scope_file(scope: str, cwd: Path, environ: dict[str, str] | None = None) -> ScopeFile:
    """Where ``scope``'s servers are stored for a command run in ``cwd``."""
    from tools.mcp import claude_json_path

    env = dict(os.environ if environ is None else environ)
    # resolved, as tools.mcp.config looks the local entry up by the resolved project dir
    root = _project_root(cwd).resolve()
    if scope == "project":
        return ScopeFile(scope, root / ".mcp.json", ("mcpServers",))
    home = Path(env["HOME"]) if env.get("HOME") else None
    claude = claude_json_path(env, home)
    if scope == "local":
        return ScopeFile(scope, claude, ("projects", str(root), "mcpServers"))
    if scope == "user":
        return ScopeFile(scope, claude, ("mcpServers",))
    raise McpUsageError(f"invalid scope {scope!r}: expected local, project or user")


def validate_entry(entry: Any) -> dict[str, Any]:
    """``entry`` if it is a server config Nerve can start; else :class:`McpUsageError`."""
    if not isinstance(entry, dict):
        raise McpUsageError("a server config must be a JSON object")
    kind = entry.get("type", "stdio" if "command" in entry or "url" not in entry else "http")
    if kind not in ("stdio", "http", "sse", "streamable-http"):
        raise McpUsageError(f"unsupported type {kind!r}: expected stdio, http or sse")
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise McpUsageError('a stdio server needs a "command" string')
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise McpUsageError('"args" must be a list of strings')
    else:
        url = entry.get("url")
        if not isinstance(url, str) or not url.strip():
            raise McpUsageError(f'an {kind} server needs a "url" string')
    for key in ("env", "headers"):
        value = entry.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise McpUsageError(f'"{key}" must be an object of strings')
    return entry


@datarecord
class _AddArgs:
    scope: str = "local"
    transport: str = "stdio"
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    positional: list[str] = field(default_factory=list)


def _option_value(args: Sequence[str], i: int, flag: str) -> tuple[str, int]:
    token = args[i]
    if "=" in token and token.startswith("--"):
        return token.split("=", 1)[1], i + 1
    if i + 1 >= len(args):
        raise McpUsageError(f"option {flag} needs a value")
    return args[i + 1], i + 2


def _parse_options(args: Sequence[str], allowed: set[str]) -> _AddArgs:
    """Options anywhere before ``--`` or the command; after the command, all is its args."""
    out = _AddArgs()
    i = 0
    while i < len(args):
        token = args[i]
        if "-t" in allowed and out.transport == "stdio" and len(out.positional) >= 2:
            # NAME COMMAND seen: the rest is the command's own argv, verbatim. An http or sse
            # server has no argv, so options may follow its URL (Claude Code's documented
            # ``claude mcp add --transport http NAME URL --header 'K: V'``).
            out.positional.extend(args[i:])
            break
        if token == "--":
            out.positional.extend(args[i + 1 :])
            break
        name = token.split("=", 1)[0] if token.startswith("--") else token
        if name in ("-s", "--scope") and "-s" in allowed:
            out.scope, i = _option_value(args, i, name)
        elif name in ("-t", "--transport") and "-t" in allowed:
            out.transport, i = _option_value(args, i, name)
        elif name in ("-e", "--env") and "-e" in allowed:
            value, i = _option_value(args, i, name)
            key, sep, val = value.partition("=")
            if not sep or not key:
                raise McpUsageError(f"invalid environment variable {value!r}: expected KEY=VALUE")
            out.env[key] = val
        elif name in ("-H", "--header") and "-H" in allowed:
            value, i = _option_value(args, i, name)
            key, sep, val = value.partition(":")
            if not sep or not key.strip():
                raise McpUsageError(f"invalid header {value!r}: expected 'Name: value'")
            out.headers[key.strip()] = val.strip()
        elif token.startswith("-") and token != "-":
            raise McpUsageError(f"unknown option {token!r}")
        else:
            out.positional.append(token)
            i += 1
    if out.scope not in SCOPES:
        raise McpUsageError(f"invalid scope {out.scope!r}: expected local, project or user")
    return out


def parse_add(args: Sequence[str]) -> tuple[str, str, dict[str, Any]]:
    """(scope, name, entry) of ``nerve mcp add ...``."""
    parsed = _parse_options(args, {"-s", "-t", "-e", "-H"})
    if len(parsed.positional) < 2:
        raise McpUsageError("expected a NAME and a COMMAND-OR-URL")
    name, target, *rest = parsed.positional
    if parsed.transport == "stdio":
        if parsed.headers:
            raise McpUsageError("headers (-H) apply to http and sse servers, not stdio")
        entry: dict[str, Any] = {"type": "stdio", "command": target, "args": rest}
        entry["env"] = parsed.env
    elif parsed.transport in ("http", "sse"):
        if rest:
            raise McpUsageError(f"an {parsed.transport} server takes a URL, no arguments")
        if parsed.env:
            raise McpUsageError("environment variables (-e) apply to stdio servers")
        entry = {"type": parsed.transport, "url": target}
        if parsed.headers:
            entry["headers"] = parsed.headers
    else:
        raise McpUsageError(f"invalid transport {parsed.transport!r}: expected stdio, http or sse")
    return parsed.scope, _check_name(name), validate_entry(entry)


def _check_name(name: str) -> str:
    if not name or not all(c.isalnum() or c in "_-." for c in name):
        raise McpUsageError(
            f"invalid server name {name!r}: use letters, digits, '-', '_' and '.' only"
        )
    return name


def _add(scope: str, name: str, entry: dict[str, Any], cwd: Path) -> int:
    from config.writer import set_settings_value

    target = scope_file(scope, cwd)
    if name in target.servers():
        print(f"MCP server {name} already exists in {scope} config", file=sys.stderr)
        return 1
    set_settings_value(target.path, (*target.keys, name), entry)
    print(f"Added {entry.get('type', 'stdio')} MCP server {name} to {scope} config")
    print(f"File modified: {target.path}")
    return 0


def _found(name: str, cwd: Path) -> list[tuple[ScopeFile, dict[str, Any]]]:
    out = []
    for scope in SCOPES:
        target = scope_file(scope, cwd)
        entry = target.servers().get(name)
        if entry is not None:
            out.append((target, entry))
    return out


def _health(config: Any, environ: dict[str, str]) -> dict[str, str]:
    """Connect to every configured server at once, as a session would, and say how each went.

    Claude Code's ``claude mcp list`` does the same ("Checking MCP server health..."): a stdio
    server is started and initialised, a remote one is reached; each is bounded by
    ``MCP_TIMEOUT``; stdio servers log to one temporary folder, emptied each time; every server is stopped again before this returns.
    """
    import asyncio
    import tempfile

    from tools.mcp.manager import McpManager

    # one folder, emptied each time: the logs of the last check, read when one failed
    log_dir = Path(tempfile.gettempdir()) / f"nerve-mcp-list-{os.getuid()}"
    shutil.rmtree(log_dir, ignore_errors=True)
    manager = McpManager(config, log_dir=log_dir, project_dir=Path.cwd(), environ=environ)

    async def check() -> dict[str, str]:
        try:
            await manager.start()
            states = {}
            for name, conn in manager.connections.items():
                if conn.connected:
                    states[name] = "✓ Connected"
                else:
                    why = conn.error or "unknown error"
                    log = f" (log: {conn.log_path})" if conn.config.type == "stdio" else ""
                    states[name] = f"✗ Failed to connect: {why}{log}"
            return states
        finally:
            await manager.close()

    return asyncio.run(check())


def _list(cwd: Path) -> int:
    from config import load_settings
    from tools.mcp import load_session_mcp_config

    settings = load_settings(cwd)
    config = load_session_mcp_config(cwd, settings)
    for warning in config.warnings:
        if "not approved" not in warning:
            print(f"warning: {warning}", file=sys.stderr)
    health: dict[str, str] = {}
    if config.servers:
        print("Checking MCP server health...\n")
        environ = {**os.environ, **dict(getattr(settings, "env", {}) or {})}
        health = _health(config, environ)
    rows = [(s, health.get(s.name, "✗ skipped (duplicate name)")) for s in config.servers]
    rows += [(s, "needs approval (project .mcp.json; /mcp approve)") for s in config.pending]
    if not rows:
        print("No MCP servers configured. Use `nerve mcp add` to add a server.")
        return 0
    for server, state in rows:
        target = server.url if server.type != "stdio" else " ".join([server.command, *server.args])
        kind = f" ({server.type})" if server.type != "stdio" else ""
        print(f"{server.name}: {target}{kind} - {state} [{server.scope}]")
    return 0


def _get(name: str, cwd: Path) -> int:
    found = _found(name, cwd)
    if not found:
        print(f"No MCP server found with name: {name}", file=sys.stderr)
        return 1
    target, entry = found[0]  # local > project > user: the entry that is used
    print(f"{name}:")
    print(f"  Scope: {_SCOPE_TEXT[target.scope]}")
    print(f"  File: {target.path}")
    kind = entry.get("type", "stdio" if "command" in entry else "http")
    print(f"  Type: {kind}")
    if kind == "stdio":
        print(f"  Command: {entry.get('command', '')}")
        print(f"  Args: {' '.join(map(str, entry.get('args', [])))}")
        env = entry.get("env") or {}
        if env:
            print("  Environment:")
            for key, value in env.items():
                print(f"    {key}={value}")
    else:
        print(f"  URL: {entry.get('url', '')}")
        headers = entry.get("headers") or {}
        if headers:
            print("  Headers:")
            for key, value in headers.items():
                print(f"    {key}: {value}")
    for other, _ in found[1:]:
        print(f"  (also defined in {other.scope} config, {other.path}; not used)")
    print(f'\nTo remove this server, run: nerve mcp remove "{name}" -s {target.scope}')
    return 0


def _remove(args: Sequence[str], cwd: Path) -> int:
    from config.writer import remove_settings_value

    parsed = _parse_options(args, {"-s"})
    if len(parsed.positional) != 1:
        raise McpUsageError("expected one NAME")
    name = parsed.positional[0]
    explicit = any(a in ("-s", "--scope") or a.startswith("--scope=") for a in args)
    found = _found(name, cwd)
    if explicit:
        found = [(t, e) for t, e in found if t.scope == parsed.scope]
    if not found:
        where = f" in {parsed.scope} config" if explicit else ""
        print(f"No MCP server found with name: {name}{where}", file=sys.stderr)
        return 1
    if len(found) > 1:
        scopes = ", ".join(t.scope for t, _ in found)
        print(
            f"MCP server {name} exists in several scopes ({scopes}); "
            f"choose one with -s, e.g. nerve mcp remove {name} -s {found[0][0].scope}",
            file=sys.stderr,
        )
        return 1
    target = found[0][0]
    remove_settings_value(target.path, (*target.keys, name))
    print(f"Removed MCP server {name} from {target.scope} config")
    print(f"File modified: {target.path}")
    return 0


def _dispatch(args: list[str], cwd: Path) -> int:
    command, rest = args[0], args[1:]
    if command == "add":
        scope, name, entry = parse_add(rest)
        return _add(scope, name, entry, cwd)
    if command == "add-json":
        parsed = _parse_options(rest, {"-s"})
        if len(parsed.positional) != 2:
            raise McpUsageError("expected a NAME and a JSON object")
        name, text = parsed.positional
        try:
            entry = json.loads(text)
        except json.JSONDecodeError as exc:
            raise McpUsageError(f"invalid JSON at column {exc.colno}: {exc.msg}") from exc
        return _add(parsed.scope, _check_name(name), validate_entry(entry), cwd)
    if command == "list" and not rest:
        return _list(cwd)
    if command == "get" and len(rest) == 1:
        return _get(rest[0], cwd)
    if command == "remove":
        return _remove(rest, cwd)
    raise McpUsageError(f"unknown or malformed command: mcp {' '.join(args)}")


def run(argv: Sequence[str]) -> int:
    """Entry point of ``nerve mcp``; 0 on success, 1 when it could not be done, 2 on bad usage."""
    return run_subcommand("mcp", USAGE, argv, _dispatch)
