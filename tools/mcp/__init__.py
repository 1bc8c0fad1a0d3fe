"""MCP servers' tools through the same pipeline as built-ins.

``config`` reads ``.mcp.json`` and the user files, ``client`` owns one connection per server,
``adapter`` turns a listed MCP tool into a ``Tool``, ``results`` converts and caps output,
``manager`` runs all servers of a session. Importing this package does not import ``mcp``
(~0.4 s); the SDK loads when the first server starts.
"""

from tools.mcp.adapter import make_input_model, mcp_tool_name, to_nerve_tool
from tools.mcp.client import McpConnection, ServerStatus
from tools.mcp.config import (
    McpConfig,
    McpServerConfig,
    expand_vars,
    load_mcp_config,
    normalize_name,
)
from tools.mcp.manager import (
    McpManager,
    McpServerView,
    claude_json_path,
    load_session_mcp_config,
)
from tools.mcp.results import convert_result

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
