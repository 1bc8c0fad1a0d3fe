"""MCP server configuration: ``.mcp.json``, ``~/.nerve/mcp.json`` and ``~/.claude.json``.

Scopes, highest first; on a name collision the whole entry of the higher scope wins (no field
merge), as in Claude Code:

* **local**   — ``~/.claude.json`` → ``projects[<project dir>].mcpServers`` (the user's own,
  private to one project);
* **project** — ``.mcp.json`` in the project root and any directory down to the cwd (the
  nearer file wins); committed with the repository, so *not trusted by default*;
* **user**    — ``~/.nerve/mcp.json`` ``mcpServers`` (ours), then ``~/.claude.json`` top-level
  ``mcpServers``.

Above them all, **dynamic**: ``--mcp-config FILE|JSON`` (repeatable, Claude Code's
``{"mcpServers": {...}}`` shape), started without approval since the user named them on the
command line; with ``--strict-mcp-config`` they are the only servers. Only there may a server be
``{"type": "sdk", "name": ...}``: the Agent SDK's in-process server (``tools.mcp.sdk_transport``).

Project servers are code a repository asks us to run. They start only when approved by a
setting the repository cannot write itself: ``enableAllProjectMcpServers: true`` or the name in
``enabledMcpjsonServers``, read from user, local, command-line or policy settings — never from
the committed ``projectSettings`` layer. ``disabledMcpjsonServers`` always wins. Unapproved
servers are listed (``McpConfig.unapproved``) and skipped with a notice.

``${VAR}`` / ``${VAR:-default}`` are expanded in command, args, env, cwd, url and headers; an
unset variable without a default leaves the text as written and adds a warning.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from tools.records import datarecord

__all__ = [
    "McpConfig",
    "McpConfigError",
    "McpServerConfig",
    "expand_vars",
    "load_mcp_config",
    "normalize_name",
    "parse_cli_mcp_configs",
    "project_approval",
]

Scope = Literal["dynamic", "local", "project", "user"]
_SCOPE_RANK: dict[str, int] = {"dynamic": -1, "local": 0, "project": 1, "user": 2}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_-]")
# Settings layers a repository cannot write: approvals are honoured only from these.
_TRUSTED_LAYERS = frozenset({"userSettings", "localSettings", "cliArg", "policySettings"})


def normalize_name(name: str) -> str:
    """Every character outside ``[A-Za-z0-9_-]`` becomes ``_`` (Claude Code's normaliser)."""
    return _UNSAFE_CHARS.sub("_", name)


@datarecord(frozen=True)
class McpServerConfig:
    """One server as configured (variables already expanded)."""

    name: str
    scope: Scope
    source: str  # the file it came from, for messages
    type: Literal["stdio", "http", "sse", "sdk"] = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_ms: int | None = None  # per-server tool-call timeout

    @property
    def normalized_name(self) -> str:
        return normalize_name(self.name)


@datarecord(frozen=True)
class McpConfig:
    """The servers to start, the project servers awaiting approval, and what was wrong."""

    servers: tuple[McpServerConfig, ...] = ()
    unapproved: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    pending: tuple[McpServerConfig, ...] = ()  # the unapproved servers, for an approval prompt


def expand_vars(text: str, environ: Mapping[str, str], missing: list[str]) -> str:
    """``${VAR}`` and ``${VAR:-default}``; an unset VAR without default stays literal."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = environ.get(name)
        if value is not None and (value != "" or default is None):
            return value
        if default is not None:
            return default
        missing.append(name)
        return m.group(0)

    return _VAR.sub(sub, text)


def _read_json(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"MCP config {path}: cannot read ({type(exc).__name__})")
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"MCP config {path}: invalid JSON at line {exc.lineno}: {exc.msg}")
        return None
    if not isinstance(data, dict):
        warnings.append(f"MCP config {path}: expected a JSON object")
        return None
    return data


def _str_map(value: Any) -> dict[str, str] | None:
    if value is None:
        return {}
    if not isinstance(value, dict):
        return None
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def _parse_entry(
    name: str,
    raw: Any,
    *,
    scope: Scope,
    source: str,
    environ: Mapping[str, str],
    warnings: list[str],
) -> McpServerConfig | None:
    where = f"MCP server {name!r} ({source})"
    if not isinstance(raw, dict):
        warnings.append(f"{where}: expected an object; skipped")
        return None
    kind = _transport(raw, where, warnings)
    if kind is None:
        return None
    if kind == "sdk":
        # The Agent SDK's in-process server: its messages travel as ``mcp_message`` control
        # requests (``tools.mcp.sdk_transport``), so only the SDK mode can reach it.
        if scope != "dynamic":
            warnings.append(f"{where}: an sdk server can only come from --mcp-config; skipped")
            return None
        return McpServerConfig(name=name, scope=scope, source=source, type="sdk")
    missing: list[str] = []

    def x(text: str) -> str:
        return expand_vars(text, environ, missing)

    env = _str_map(raw.get("env"))
    headers = _str_map(raw.get("headers"))
    args = raw.get("args", [])
    if env is None or headers is None or not isinstance(args, list):
        warnings.append(f"{where}: env/headers must be objects and args a list; skipped")
        return None
    timeout_ms = _timeout_ms(raw, where, warnings)
    if kind == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            warnings.append(f"{where}: a stdio server needs a command; skipped")
            return None
        cwd = raw.get("cwd")
        config = McpServerConfig(
            name=name,
            scope=scope,
            source=source,
            type="stdio",
            command=x(command),
            args=tuple(x(str(a)) for a in args),
            env={k: x(v) for k, v in env.items()},
            cwd=x(cwd) if isinstance(cwd, str) and cwd else None,
            timeout_ms=timeout_ms,
        )
    else:
        url = raw.get("url")
        if not isinstance(url, str) or not url.strip():
            warnings.append(f"{where}: an {kind} server needs a url; skipped")
            return None
        config = McpServerConfig(
            name=name,
            scope=scope,
            source=source,
            type="sse" if kind == "sse" else "http",
            url=x(url),
            headers={k: x(v) for k, v in headers.items()},
            timeout_ms=timeout_ms,
        )
    for var in dict.fromkeys(missing):
        warnings.append(f"{where}: environment variable {var} is not set; left as ${{{var}}}")
    return config


def _transport(raw: dict[str, Any], where: str, warnings: list[str]) -> str | None:
    """The entry's transport (``stdio``, ``http``, ``sse`` or ``sdk``); None if unsupported."""
    kind = raw.get("type", "stdio" if "command" in raw or "url" not in raw else "http")
    if kind == "streamable-http":
        kind = "http"
    if kind in ("ws", "sse-ide", "ws-ide"):
        warnings.append(f"{where}: transport {kind!r} is not supported; skipped")
        return None
    if kind not in ("stdio", "http", "sse", "sdk"):
        warnings.append(f"{where}: unknown type {kind!r}; skipped")
        return None
    return str(kind)


def _timeout_ms(raw: dict[str, Any], where: str, warnings: list[str]) -> int | None:
    """The entry's per-call ``timeout`` in ms if it is a positive number, else None (noted
    when it is something else)."""
    timeout = raw.get("timeout")
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        warnings.append(f"{where}: timeout must be a positive number of ms; ignored")
        return None
    return int(timeout) if timeout else None


def _servers_of(
    data: dict[str, Any] | None, path: Path, warnings: list[str]
) -> Iterable[tuple[str, Any]]:
    if data is None:
        return ()
    servers = data.get("mcpServers")
    if servers is None:
        return ()
    if not isinstance(servers, dict):
        warnings.append(f"MCP config {path}: mcpServers must be an object")
        return ()
    return servers.items()


def project_approval(layers: Iterable[Any]) -> tuple[bool, frozenset[str], frozenset[str]]:
    """(enable all, enabled names, disabled names) from the trusted settings layers.

    ``layers`` are ``config`` ``LayerFile``s, highest precedence first: the first layer that
    sets ``enableAllProjectMcpServers`` decides it; the name lists are unions.
    """
    enable_all: bool | None = None
    enabled: set[str] = set()
    disabled: set[str] = set()
    for layer in layers:
        data = getattr(layer, "data", None)
        if getattr(layer, "source", None) not in _TRUSTED_LAYERS or not isinstance(data, dict):
            continue
        value = data.get("enableAllProjectMcpServers")
        if enable_all is None and isinstance(value, bool):
            enable_all = value
        for key, target in (
            ("enabledMcpjsonServers", enabled),
            ("disabledMcpjsonServers", disabled),
        ):
            names = data.get(key)
            if isinstance(names, list):
                target.update(str(n) for n in names)
    return bool(enable_all), frozenset(enabled), frozenset(disabled)


def _project_files(cwd: Path, project_root: Path) -> list[Path]:
    """``.mcp.json`` from the cwd up to the project root, nearest first."""
    cwd, root = cwd.resolve(), project_root.resolve()
    dirs = [cwd]
    if cwd != root and root in cwd.parents:
        for parent in cwd.parents:
            dirs.append(parent)
            if parent == root:
                break
    return [d / ".mcp.json" for d in dirs]


class McpConfigError(ValueError):
    """A ``--mcp-config`` value that cannot be used (the user typed it: an error, not a skip)."""


def parse_cli_mcp_configs(
    values: Iterable[str], *, cwd: Path, environ: Mapping[str, str]
) -> tuple[list[McpServerConfig], list[str]]:
    """``--mcp-config`` values (each a JSON file or inline JSON) -> dynamic-scope servers and
    warnings (unset variables). A later value's server replaces an earlier one of that name."""
    chosen: dict[str, McpServerConfig] = {}
    warnings: list[str] = []
    for value in values:
        if value.lstrip().startswith("{"):
            shown, text = "--mcp-config (inline JSON)", value
        else:
            path = Path(os.path.expanduser(value))
            path = path if path.is_absolute() else cwd / path
            shown = f"--mcp-config {value}"
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                reason = "file not found" if isinstance(exc, FileNotFoundError) else str(exc)
                raise McpConfigError(f"{shown}: {reason}") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise McpConfigError(f"{shown}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            raise McpConfigError(f'{shown}: expected {{"mcpServers": {{"name": {{...}}}}}}')
        for name, raw in servers.items():
            problems: list[str] = []
            parsed = _parse_entry(
                str(name), raw, scope="dynamic", source=shown, environ=environ, warnings=problems
            )
            if parsed is None:
                raise McpConfigError(problems[-1].removesuffix("; skipped"))
            warnings += problems
            chosen[parsed.name] = parsed
    return list(chosen.values()), warnings


def load_mcp_config(
    cwd: Path,
    *,
    project_root: Path | None = None,
    nerve_user_dir: Path,
    claude_json: Path,
    settings_layers: Iterable[Any] = (),
    environ: Mapping[str, str] | None = None,
    cli_servers: Iterable[McpServerConfig] = (),
    strict: bool = False,
) -> McpConfig:
    """Every configured server, resolved by scope and approval (see module docstring).

    ``claude_json`` is Claude Code's ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json``
    when that variable is set). Never raises on bad files: they become warnings.
    ``cli_servers`` (``--mcp-config``) win over every file; ``strict`` reads no file at all.
    """
    environ = os.environ if environ is None else environ
    warnings: list[str] = []
    chosen: dict[str, McpServerConfig] = {s.name: s for s in cli_servers}
    if strict:
        return McpConfig(tuple(chosen.values()))

    def offer(entries: Iterable[tuple[str, Any]], scope: Scope, source: str) -> None:
        for name, raw in entries:
            current = chosen.get(name)
            if current is not None and _SCOPE_RANK[current.scope] <= _SCOPE_RANK[scope]:
                continue  # a higher (or nearer) entry already won, whole
            parsed = _parse_entry(
                name, raw, scope=scope, source=source, environ=environ, warnings=warnings
            )
            if parsed is not None:
                chosen[name] = parsed

    claude = _read_json(claude_json, warnings)
    project_dir = (project_root or cwd).resolve()
    if claude is not None:
        projects = claude.get("projects")
        if isinstance(projects, dict):
            for key in dict.fromkeys((str(cwd.resolve()), str(project_dir))):
                entry = projects.get(key)
                if isinstance(entry, dict):
                    offer(_servers_of(entry, claude_json, warnings), "local", str(claude_json))
    for path in _project_files(cwd, project_dir):
        offer(_servers_of(_read_json(path, warnings), path, warnings), "project", str(path))
    ours = nerve_user_dir / "mcp.json"
    offer(_servers_of(_read_json(ours, warnings), ours, warnings), "user", str(ours))
    offer(_servers_of(claude, claude_json, warnings), "user", str(claude_json))

    enable_all, enabled, disabled = project_approval(settings_layers)
    servers: list[McpServerConfig] = []
    unapproved: list[str] = []
    pending: list[McpServerConfig] = []
    for name, server in chosen.items():
        if server.scope == "project":
            if name in disabled:
                continue
            if not (enable_all or name in enabled):
                unapproved.append(name)
                pending.append(server)
                continue
        servers.append(server)
    if unapproved:
        names = ", ".join(unapproved)
        warnings.append(
            f"Project MCP servers not started (not approved): {names}. Approve them with "
            "/mcp approve, or with "
            '"enableAllProjectMcpServers": true or "enabledMcpjsonServers": [...] in your '
            "user or local settings."
        )
    return McpConfig(tuple(servers), tuple(unapproved), tuple(warnings), tuple(pending))
