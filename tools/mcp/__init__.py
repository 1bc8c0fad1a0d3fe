"""MCP servers' tools through the same pipeline as built-ins.

``config`` reads ``.mcp.json`` and the user files, ``session_config`` gives a session its
servers, ``client`` owns one connection per server, ``adapter`` turns a listed MCP tool into a
``Tool``, ``results`` converts and caps output, ``manager`` runs all servers of a session.
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
        McpServerConfig,
        expand_vars,
        load_mcp_config,
        normalize_name,
    )
    from tools.mcp.manager import McpManager, McpServerView
    from tools.mcp.results import convert_result
    from tools.mcp.session_config import claude_json_path, load_session_mcp_config

__all__ = [
    "McpConfig",
    "McpConnection",
    "McpManager",
    "McpServerConfig",
    "McpServerView",
    "ServerStatus",
    "claude_json_path",
    "convert_result",
    "expand_vars",
    "load_mcp_config",
    "load_session_mcp_config",
    "make_input_model",
    "mcp_tool_name",
    "normalize_name",
    "to_nerve_tool",
]

_HOME = {
    "make_input_model": "adapter",
    "mcp_tool_name": "adapter",
    "to_nerve_tool": "adapter",
    "McpConnection": "client",
    "ServerStatus": "client",
    "McpConfig": "config",
    "McpServerConfig": "config",
    "expand_vars": "config",
    "load_mcp_config": "config",
    "normalize_name": "config",
    "McpManager": "manager",
    "McpServerView": "manager",
    "convert_result": "results",
    "claude_json_path": "session_config",
    "load_session_mcp_config": "session_config",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tools.mcp.{module}"), name)
    globals()[name] = value
    return value
