"""The names of the built-in commands that run without the app, for places that must not pay
for importing the registry (the stream-json ``init`` frame's ``slash_commands``). A test keeps
the list equal to ``builtin.default_registry()``'s commands that are not interactive-only."""

from __future__ import annotations

__all__ = ["PRINT_COMMANDS"]

PRINT_COMMANDS = (
    "help",
    "permissions",
    "mode",
    "model",
    "cost",
    "tools",
    "tasks",
    "mcp",
    "todos",
    "sandbox",
    "agents",
    "init",
    "compact",
    "context",
    "config",
    "status",
    "doctor",
    "add-dir",
    "export",
)
