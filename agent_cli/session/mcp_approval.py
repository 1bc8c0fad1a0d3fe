"""Approving a project's ``.mcp.json`` servers: the choice is saved in local settings, as
Claude Code does (``enableAllProjectMcpServers``, ``enabledMcpjsonServers``,
``disabledMcpjsonServers`` in ``<project>/.claude/settings.local.json``, a file the repository
does not ship), and the approved servers start at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["approve_project_servers", "pending_project_servers"]


def pending_project_servers(manager: Any) -> list[tuple[str, str]]:
    """(name, command line or url) of the project servers waiting for approval."""
    if manager is None:
        return []
    from tools.mcp.manager import describe

    return [(name, describe(s)) for name, s in manager.pending.items()]


def _merge(path: Path, key: str, names: list[str]) -> None:
    import json

    from config import set_settings_value

    try:
        current = json.loads(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        current = None
    old = [str(n) for n in current] if isinstance(current, list) else []
    set_settings_value(path, (key,), [*old, *(n for n in names if n not in old)])


async def approve_project_servers(manager: Any, cwd: Path, choice: list[str] | str) -> list[str]:
    """``choice``: ``"all"``, ``"none"`` or the names to use (the rest are declined).

    Returns what to tell the user; raises ``ValueError`` for a name that is not pending.
    """
    from config import find_project_root, set_settings_value

    pending = [name for name, _ in pending_project_servers(manager)]
    if not pending:
        return ["No project MCP servers are waiting for approval."]
    if choice == "all":
        chosen = pending
    elif choice == "none":
        chosen = []
    else:
        unknown = [n for n in choice if n not in pending]
        if unknown:
            raise ValueError(
                f"not waiting for approval: {', '.join(unknown)} (pending: {', '.join(pending)})"
            )
        chosen = list(choice)
    declined = [n for n in pending if n not in chosen]
    path = find_project_root(cwd) / ".claude" / "settings.local.json"
    if choice == "all":
        set_settings_value(path, ("enableAllProjectMcpServers",), True)
    if chosen and choice != "all":
        _merge(path, "enabledMcpjsonServers", chosen)
    if declined:
        _merge(path, "disabledMcpjsonServers", declined)
    manager.reject(declined)
    messages = await manager.approve(chosen)
    if declined:
        messages.append(f"Not using: {', '.join(declined)}")
    messages.append(f"Saved in {path}")
    return messages
