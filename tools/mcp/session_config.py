"""Which MCP servers a session has: the config files, ``--mcp-config``, and the manager.

Split from ``manager`` so a session with no server configured (most) reads its config without
importing the client, the adapters and the manager (the MCP SDK itself loads even later, when
a server starts).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.mcp.config import McpConfig, McpServerConfig, load_mcp_config, parse_cli_mcp_configs

if TYPE_CHECKING:
    from tools.mcp.manager import McpManager

__all__ = ["claude_json_path", "load_session_mcp_config", "session_mcp"]


def claude_json_path(environ: Mapping[str, str], home: Path | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR/.claude.json`` when set (as Claude Code does), else ``~/.claude.json``."""
    override = environ.get("CLAUDE_CONFIG_DIR", "").strip()
    if override:
        return Path(os.path.expanduser(override)) / ".claude.json"
    return (home or Path.home()) / ".claude.json"


def load_session_mcp_config(
    cwd: Path,
    settings: Any,
    environ: Mapping[str, str] | None = None,
    *,
    cli_servers: tuple[McpServerConfig, ...] = (),
    strict: bool = False,
) -> McpConfig:
    """The MCP config for a session, from a ``config.LoadedSettings`` and the environment
    (``cli_servers``/``strict``: ``--mcp-config`` and ``--strict-mcp-config``)."""
    from config.paths import resolve_config_dirs

    environ = os.environ if environ is None else environ
    dirs = resolve_config_dirs(home=None, policy_dir=None, claude_policy_dir=None, environ=environ)
    return load_mcp_config(
        cwd,
        project_root=getattr(settings, "project_root", None),
        nerve_user_dir=dirs.nerve_user,
        claude_json=claude_json_path(environ, dirs.home),
        settings_layers=getattr(settings, "layers", ()),
        environ={**environ, **dict(getattr(settings, "env", {}) or {})},
        cli_servers=cli_servers,
        strict=strict,
    )


def session_mcp(
    cwd: Path,
    settings: Any,
    *,
    log_dir: Path,
    environ: Mapping[str, str] | None = None,
    cli_configs: tuple[str, ...] = (),
    strict: bool = False,
) -> tuple[McpManager | None, list[str]]:
    """The session's MCP manager (``None`` when no server is configured) and config warnings.

    Cheap: reads a few JSON files; nothing starts until ``start()``. ``cli_configs`` are the
    ``--mcp-config`` values (a bad one raises ``McpConfigError``).
    """
    environ = dict(os.environ if environ is None else environ)
    environ.update(dict(getattr(settings, "env", {}) or {}))
    cli_servers, cli_warnings = parse_cli_mcp_configs(cli_configs, cwd=cwd, environ=environ)
    config = load_session_mcp_config(
        cwd, settings, environ, cli_servers=tuple(cli_servers), strict=strict
    )
    config = McpConfig(
        config.servers, config.unapproved, (*cli_warnings, *config.warnings), config.pending
    )
    if not config.servers and not config.pending:
        return None, list(config.warnings)
    from tools.mcp.manager import McpManager  # the client and adapters: only with servers

    project_dir = Path(getattr(settings, "project_root", None) or cwd)
    manager = McpManager(config, log_dir=log_dir, project_dir=project_dir, environ=environ)
    return manager, list(config.warnings)
