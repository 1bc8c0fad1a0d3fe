"""The SDK mode's route to the Agent SDK's in-process MCP servers (``{"type": "sdk"}``).

Each JSON-RPC message for such a server is sent as an ``mcp_message`` control request
(``server_name``, ``message``); the SDK answers ``{"mcp_response": <JSON-RPC reply>}``
(``claude_agent_sdk/_internal/query.py``). ``tools.mcp.sdk_transport`` carries the
``ClientSession`` over it, so these servers' tools join the pool like any MCP tool and go
through the whole pipeline (permissions, hooks, result budget). An error answer, or stdin
closing, fails that one message (the transport makes it a JSON-RPC error).
"""

from __future__ import annotations

from typing import Any

from agent_cli.frontends.sdk.control import ControlChannel, ControlError
from agent_cli.frontends.stream_json.parts import server_status

__all__ = ["attach_sdk_mcp", "mcp_status", "sdk_mcp_sender"]


def sdk_mcp_sender(channel: ControlChannel) -> Any:
    """An ``SdkMcpSend`` over ``channel``."""

    async def send(server: str, message: dict[str, Any]) -> dict[str, Any] | None:
        answer = await channel.request("mcp_message", server_name=server, message=message)
        reply = answer.get("mcp_response")
        if reply is not None and not isinstance(reply, dict):
            raise ControlError(f"the mcp_message answer's mcp_response is {type(reply).__name__}")
        return reply

    return send


def attach_sdk_mcp(session: Any, channel: ControlChannel) -> None:
    """Route the session's sdk servers (if any) over ``channel``."""
    attach = getattr(session, "attach_sdk_mcp", None)
    if attach is not None:
        attach(sdk_mcp_sender(channel))


async def mcp_status(session: Any) -> dict[str, Any]:
    """The ``mcp_status`` answer. The servers are connected first if no turn has yet (the SDK
    may ask before its first prompt), so it shows how they ended up, not "pending"."""
    connect = getattr(session, "connect_mcp", None)
    if connect is not None:
        await connect()
    servers = []
    for view in session.mcp_servers():
        entry: dict[str, Any] = {
            "name": view.name,
            "status": server_status(view.status),
            "scope": view.scope,
            "config": {"type": view.transport},
        }
        if view.error:
            entry["error"] = view.error
        if view.server_info is not None:
            entry["serverInfo"] = {"name": view.server_info[0], "version": view.server_info[1]}
        if view.status == "connected":
            entry["tools"] = [
                {"name": name, **({"description": text} if text else {})}
                for name, text in view.tool_info
            ]
        servers.append(entry)
    return {"mcpServers": servers}
