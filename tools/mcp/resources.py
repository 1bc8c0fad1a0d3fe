"""``ListMcpResourcesTool`` and ``ReadMcpResourceTool``: the servers' resources for the model.

Claude Code's names (``ListMcpResources`` / ``ReadMcpResource`` are accepted as aliases) and
inputs: ``{server?}`` lists the resources of one server or of all connected ones; ``{server,
uri}`` reads one. They are read-only and deferred, and sit with the MCP tools after the
built-ins in the pool (offered only when a server is configured), so the built-in prefix of the
prompt cache does not change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from tools.base import Tool, build_tool
from tools.context import ToolUseContext
from tools.errors import ToolExecutionError
from tools.mcp.client import McpCallError, McpConnection
from tools.result import ToolResult

__all__ = ["RESOURCE_TOOL_NAMES", "resource_tools"]

RESOURCE_TOOL_NAMES = frozenset({"ListMcpResourcesTool", "ReadMcpResourceTool"})
_MAX_PAGES = 50


class ListInput(BaseModel):
    server: str | None = Field(
        default=None, description="Optional server name to filter resources by"
    )


class ReadInput(BaseModel):
    server: str = Field(description="The MCP server name")
    uri: str = Field(description="The resource URI to read")


Connections = Callable[[], Mapping[str, McpConnection]]


def _pick(connections: Mapping[str, McpConnection], server: str) -> McpConnection:
    conn = connections.get(server)
    if conn is None:
        names = ", ".join(sorted(connections)) or "none"
        raise ToolExecutionError(f'MCP server "{server}" not found. Available servers: {names}')
    return conn


async def _list_of(conn: McpConnection) -> list[dict[str, Any]]:
    from mcp.types import PaginatedRequestParams

    out: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await conn.request("list_resources", params=params)
        for r in page.resources:
            item = {"uri": str(r.uri), "name": r.name, "server": conn.name}
            if r.mime_type:
                item["mimeType"] = r.mime_type
            if r.description:
                item["description"] = r.description
            out.append(item)
        cursor = page.next_cursor
        if not cursor:
            break
    return out


def resource_tools(connections: Connections) -> list[Tool[Any]]:
    """The two tools over the session's connections (looked up at call time)."""

    async def list_call(inp: ListInput, _ctx: ToolUseContext, _p: Any) -> ToolResult:
        conns = connections()
        targets = [_pick(conns, inp.server)] if inp.server else list(conns.values())
        items: list[dict[str, Any]] = []
        problems: list[str] = []
        for conn in targets:
            if not conn.connected and not inp.server:
                continue
            try:
                items.extend(await _list_of(conn))
            except McpCallError as exc:
                if inp.server:
                    raise ToolExecutionError(str(exc)) from None
                problems.append(str(exc))
        if not items:
            text = "No resources found. MCP servers may still provide tools even if they have no resources."
        else:
            text = json.dumps(items, ensure_ascii=False, indent=1)
        if problems:
            text += "\n" + "\n".join(problems)
        return ToolResult(text)

    async def read_call(inp: ReadInput, _ctx: ToolUseContext, _p: Any) -> ToolResult:
        conn = _pick(connections(), inp.server)
        try:
            result = await conn.request("read_resource", inp.uri)
        except McpCallError as exc:
            raise ToolExecutionError(str(exc)) from None
        contents = []
        for c in result.contents:
            entry: dict[str, Any] = {"uri": str(c.uri)}
            if getattr(c, "mime_type", None):
                entry["mimeType"] = c.mime_type
            text = getattr(c, "text", None)
            if isinstance(text, str):
                entry["text"] = text
            else:
                blob = getattr(c, "blob", "") or ""
                entry["text"] = f"[binary content, {len(blob) * 3 // 4} bytes, not shown]"
            contents.append(entry)
        # No cap here: over the tool's limit the pipeline saves it whole and sends a preview.
        return ToolResult(json.dumps({"contents": contents}, ensure_ascii=False, indent=1))

    return [
        build_tool(
            name="ListMcpResourcesTool",
            aliases=("ListMcpResources",),
            input_model=ListInput,
            call=list_call,
            description="Lists the resources of the configured MCP servers (all, or one "
            "server's). Each has a uri, a name, the server and optionally a mimeType and a "
            "description.",
            search_hint="mcp resources list",
            is_read_only=True,
            is_concurrency_safe=True,
            should_defer=True,
        ),
        build_tool(
            name="ReadMcpResourceTool",
            aliases=("ReadMcpResource",),
            input_model=ReadInput,
            call=read_call,
            description="Reads one resource of an MCP server by server name and uri.",
            search_hint="mcp resource read",
            is_read_only=True,
            is_concurrency_safe=True,
            should_defer=True,
        ),
    ]
