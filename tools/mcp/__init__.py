"""MCP servers' tools through the same pipeline as built-ins.

``config`` reads ``.mcp.json`` and the user files, ``session_config`` gives a session its
servers, ``client`` owns one connection per server, ``adapter`` turns a listed MCP tool into a
``Tool``, ``results`` converts and caps output, ``resources`` lists and reads the servers'
resources, ``manager`` runs all servers of a session.
Importing this package imports none of them (each name below loads its module on first use),
so reading the config of a session without servers loads neither the client nor the adapters;
the ``mcp`` SDK (~0.4 s) loads when the first server starts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.mcp.adapter import make_input_model, mcp_tool_name, to_nerve_tool
    from tools.mcp.client import McpConnection, ServerStatus
    from tools.mcp.config import (
        McpConfig,
        McpConfigError,
        McpServerConfig,
        expand_vars,
        load_mcp_config,
        normalize_name,
        parse_cli_mcp_configs,
    )
    from tools.mcp.manager import McpManager, McpServerView, describe, format_servers
    from tools.mcp.resources import RESOURCE_TOOL_NAMES
    from tools.mcp.results import convert_result
    from tools.mcp.session_config import claude_json_path, load_session_mcp_config, session_mcp

__all__ = [
    "RESOURCE_TOOL_NAMES",
    "McpConfig",
    "McpConfigError",
    "McpConnection",
    "McpManager",
    "McpServerConfig",
    "McpServerView",
    "ServerStatus",
    "claude_json_path",
    "convert_result",
    "describe",
    "expand_vars",
    "format_servers",
    "load_mcp_config",
    "load_session_mcp_config",
    "make_input_model",
    "mcp_tool_name",
    "normalize_name",
    "parse_cli_mcp_configs",
    "session_mcp",
    "to_nerve_tool",
]

_HOME = {
    "make_input_model": "adapter",
    "mcp_tool_name": "adapter",
    "to_nerve_tool": "adapter",
    "McpConnection": "client",
    "ServerStatus": "client",
    "McpConfig": "config",
    "McpConfigError": "config",
    "parse_cli_mcp_configs": "config",
    "McpServerConfig": "config",
    "expand_vars": "config",
    "load_mcp_config": "config",
    "normalize_name": "config",
    "McpManager": "manager",
    "McpServerView": "manager",
    "describe": "manager",
    "format_servers": "manager",
    "RESOURCE_TOOL_NAMES": "resources",
    "convert_result": "results",
    "claude_json_path": "session_config",
    "load_session_mcp_config": "session_config",
    "session_mcp": "session_config",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tools.mcp.{module}"), name)
    globals()[name] = value
    return value
