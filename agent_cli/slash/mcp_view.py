"""``/mcp`` in the app: after the listing, a modal list of the servers; picking one offers what
can be done with it now (reconnect, disable, enable, or approve a project server)."""

from __future__ import annotations

from typing import Any

from agent_cli.slash.registry import SlashHost

__all__ = ["actions_for", "start_mcp_view"]


def actions_for(status: str) -> list[str]:
    """What ``/mcp`` offers for a server in ``status`` (``tools.mcp.client.ServerStatus``)."""
    if status == "needs approval":
        return ["approve"]
    if status == "disabled":
        return ["enable"]
    return ["reconnect", "disable"]


def start_mcp_view(host: SlashHost) -> bool:
    """Put up the server list; False when there is nothing to act on."""
    session: Any = host.session
    servers = getattr(session, "mcp_servers", None)
    act = getattr(session, "mcp_action", None)
    views = list(servers()) if callable(servers) else []
    if not views or not callable(act):
        return False

    async def picked(index: int | None) -> None:
        if index is None:
            return
        view = views[index]
        actions = actions_for(view.status)

        async def chosen(which: int | None) -> None:
            if which is None:
                return
            action = actions[which]
            if action == "approve":
                from agent_cli.slash.mcp_approval import start_project_question

                start_project_question(host)
                return
            try:
                host.say(await act(action, view.name))
            except Exception as exc:  # the session goes on
                host.say(f"/mcp {action} {view.name}: {type(exc).__name__}: {exc}", "error")

        labels = [a.capitalize() for a in actions]
        host.choose(f"MCP server {view.name}: {view.status}", labels, chosen)

    options = [f"{v.name} ({v.scope}, {v.transport}): {v.status}" for v in views]
    host.choose("MCP servers (Esc to close)", options, picked)
    return True
