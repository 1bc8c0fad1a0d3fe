"""All MCP servers of one session: started together, listed, turned into tools, closed.

``McpManager.start()`` connects every configured server concurrently (each bounded by
``MCP_TIMEOUT``, default 30 s); a server that fails is a warning, never an exception.
``tools()`` are the adapters of the connected (or reconnecting) servers, plus the resource
tools, for ``assemble_tool_pool``. ``enable`` / ``disable`` / ``reconnect`` serve ``/mcp``;
``close()`` ends every server process.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tools.base import Tool
from tools.mcp.adapter import McpToolSettings, mcp_tool_name, to_nerve_tool
from tools.mcp.client import (
    DEFAULT_STARTUP_TIMEOUT_MS,
    DEFAULT_TOOL_TIMEOUT_MS,
    McpConnection,
    ServerStatus,
    env_ms,
    quiet_sdk_logging,
)
from tools.mcp.config import (
    McpConfig,
    McpServerConfig,
    normalize_name,
)
from tools.mcp.resources import resource_tools
from tools.mcp.results import max_output_tokens
from tools.mcp.sdk_transport import SdkMcpSend
from tools.records import datarecord

__all__ = [
    "McpManager",
    "McpServerView",
    "describe",
    "format_servers",
]


@datarecord(frozen=True)
class McpServerView:
    """What ``/mcp`` shows for one server."""

    name: str
    scope: str
    transport: str
    status: str
    tools: int
    error: str | None
    startup_s: float | None
    log_path: str | None
    target: str = ""  # the command line or url, shown for servers awaiting approval
    server_info: tuple[str, str] | None = None  # (name, version) the server gave when connected
    tool_info: tuple[tuple[str, str], ...] = ()  # (name, description) of its tools when connected


class McpManager:
    """The MCP servers of one session (see module docstring)."""

    def __init__(
        self,
        config: McpConfig,
        *,
        log_dir: Path,
        project_dir: Path,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.log_dir = log_dir
        environ = dict(os.environ if environ is None else environ)
        self.startup_timeout_s = env_ms(environ, "MCP_TIMEOUT", DEFAULT_STARTUP_TIMEOUT_MS) / 1000
        self.tool_settings = McpToolSettings(
            tool_timeout_s=env_ms(environ, "MCP_TOOL_TIMEOUT", DEFAULT_TOOL_TIMEOUT_MS) / 1000,
            output_tokens=max_output_tokens(environ),
        )
        self.connections: dict[str, McpConnection] = {}
        taken: set[str] = set()
        self._early_warnings: list[str] = []
        for server in config.servers:
            key = server.normalized_name
            if key in taken:
                self._early_warnings.append(
                    f"MCP server {server.name!r}: its name normalises to {key!r} like another "
                    "server's; skipped"
                )
                continue
            taken.add(key)
            self.connections[server.name] = McpConnection(
                server,
                log_path=log_dir / f"{normalize_name(server.name)}.log",
                project_dir=project_dir,
                environ=environ,
            )
        self.project_dir = project_dir
        self.environ = environ
        self.pending: dict[str, McpServerConfig] = {s.name: s for s in config.pending}
        self._start: asyncio.Task[list[str]] | None = None
        self._resource_tools = resource_tools(lambda: self.connections)
        self._log_handler: logging.Handler | None = None
        self._tools: list[Tool[Any]] | None = None

    @property
    def started(self) -> bool:
        return self._start is not None and self._start.done()

    def start_soon(self) -> None:
        """Begin connecting in the background (a UI calls this after its first frame).

        Without a running event loop in this thread it does nothing: ``start()`` will.
        """
        if self._start is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._start = loop.create_task(self._start_all())

    async def start(self) -> list[str]:
        """Connect every server (once; later calls await the same start). Returns warnings."""
        if self._start is None:
            self._start = asyncio.get_running_loop().create_task(self._start_all())
        return await asyncio.shield(self._start)

    async def _start_all(self) -> list[str]:
        if self.connections and self._log_handler is None:
            self._log_handler = quiet_sdk_logging(self.log_dir / "client.log")
        await asyncio.gather(*(c.start(self.startup_timeout_s) for c in self.connections.values()))
        warnings = list(self._early_warnings)
        for conn in self.connections.values():
            if not conn.connected:
                log = f" (log: {conn.log_path})" if conn.config.type == "stdio" else ""
                warnings.append(
                    f"MCP server {conn.name} failed to start: {conn.error or 'unknown error'}{log}"
                )
        self._tools = None
        tools = self.tools()
        self._early_warnings = []
        return warnings + self._tool_warnings(tools)

    def set_sdk_transport(self, send: SdkMcpSend) -> None:
        """The Agent SDK mode's route to its in-process (``"type": "sdk"``) servers."""
        for conn in self.connections.values():
            if conn.config.type == "sdk":
                conn.sdk_send = send

    def set_roots(self, dirs: list[Path] | tuple[Path, ...]) -> None:
        """The working directories, answered to ``roots/list``."""
        for conn in self.connections.values():
            conn.roots = tuple(dirs)

    def _conn(self, name: str) -> McpConnection:
        conn = self.connections.get(name)
        if conn is None:
            known = ", ".join(self.connections) or "none"
            raise KeyError(f"no MCP server named {name!r} (servers: {known})")
        return conn

    async def disable(self, name: str) -> str:
        """Stop a server for this session; its tools leave the pool."""
        conn = self._conn(name)
        await conn.close(ServerStatus.DISABLED)
        self._tools = None
        return f"MCP server {name} disabled"

    async def reconnect(self, name: str) -> str:
        """Stop (if running) and start a server again; also enables a disabled one."""
        conn = self._conn(name)
        await conn.close()
        ok = await conn.start(self.startup_timeout_s)
        self._tools = None
        if ok:
            return f"MCP server {name} connected ({len(conn.tools)} tool(s))"
        return f"MCP server {name} failed to start: {conn.error} (log: {conn.log_path})"

    def prompt_commands(self) -> list[tuple[str, str, str, McpConnection, Any]]:
        """``(mcp__server__prompt, description, argument hint, connection, prompt)`` of every
        connected server's prompts."""
        out = []
        for conn in self.connections.values():
            if not conn.connected:
                continue
            for prompt in conn.prompts:
                args = list(getattr(prompt, "arguments", None) or [])
                hint = " ".join(
                    f"<{a.name}>" if a.required else f"[{a.name}]" for a in args if a.name
                )
                command = f"mcp__{normalize_name(conn.name)}__{normalize_name(prompt.name)}"
                description = str(prompt.description or prompt.title or prompt.name)
                out.append((command, f"{description} (MCP {conn.name})", hint, conn, prompt))
        return out

    async def expand_prompt(self, command: str, args: str) -> str:
        """The text of an MCP prompt (``prompts/get``) for ``/command args``; arguments go in
        order (shell-style quoting). Raises ``KeyError`` / ``ValueError`` / ``McpCallError``
        with a message for the user."""
        import shlex

        found = next((c for c in self.prompt_commands() if c[0].lower() == command.lower()), None)
        if found is None:
            raise KeyError(f"no MCP prompt /{command}")
        _, _, _, conn, prompt = found
        specs = list(getattr(prompt, "arguments", None) or [])
        try:
            values = shlex.split(args)
        except ValueError as exc:
            raise ValueError(f"/{command}: {exc}") from None
        if len(values) > len(specs):
            values[len(specs) - 1 :] = [" ".join(values[len(specs) - 1 :])] if specs else []
        arguments = {spec.name: v for spec, v in zip(specs, values, strict=False)}
        missing = [a.name for a in specs if a.required and a.name not in arguments]
        if missing:
            raise ValueError(f"/{command} needs: {' '.join(f'<{m}>' for m in missing)}")
        result = await conn.request("get_prompt", prompt.name, arguments)
        parts = []
        for message in result.messages:
            content = message.content
            text = getattr(content, "text", None)
            if isinstance(text, str):
                parts.append(text)
            elif getattr(content, "type", None) == "resource":
                inner = getattr(getattr(content, "resource", None), "text", None)
                if isinstance(inner, str):
                    parts.append(inner)
        return "\n\n".join(parts)

    async def approve(self, names: list[str]) -> list[str]:
        """Start project servers the user just approved; one message per server."""
        messages = []
        for name in names:
            server = self.pending.pop(name, None)
            if server is None:
                continue
            conn = McpConnection(
                server,
                log_path=self.log_dir / f"{normalize_name(name)}.log",
                project_dir=self.project_dir,
                environ=self.environ,
            )
            conn.roots = next(iter(self.connections.values()), conn).roots
            self.connections[name] = conn
            messages.append(await self.reconnect(name))
        return messages

    def reject(self, names: list[str]) -> None:
        for name in names:
            self.pending.pop(name, None)

    async def enable(self, name: str) -> str:
        conn = self._conn(name)
        if conn.connected:
            return f"MCP server {name} is already connected"
        return await self.reconnect(name)

    def _tool_warnings(self, tools: list[Tool[Any]]) -> list[str]:
        listed = sum(len(c.tools) for c in self.connections.values() if c.connected)
        offered = sum(1 for t in tools if t.is_mcp)
        if listed > offered:
            return [f"MCP: {listed - offered} tool(s) skipped (duplicate names after normalising)"]
        return []

    def tools(self) -> list[Tool[Any]]:
        """The adapters of every connected server's tools (names unique)."""
        if self._tools is not None:
            return list(self._tools)
        out: list[Tool[Any]] = []
        seen: set[str] = set()
        for conn in self.connections.values():
            # A reconnecting server keeps its tools listed: a call meanwhile is a clear error.
            if not (conn.connected or conn.status is ServerStatus.RECONNECTING):
                continue
            for mcp_tool in conn.tools:
                name = mcp_tool_name(conn.name, str(getattr(mcp_tool, "name", "")))
                if name in seen or not str(getattr(mcp_tool, "name", "")):
                    continue
                try:
                    tool = to_nerve_tool(conn, mcp_tool, self.tool_settings)
                except (ValueError, TypeError):
                    continue  # a tool we cannot represent is not offered
                seen.add(name)
                out.append(tool)
        if any(c.has_resources for c in self.connections.values()):
            out.extend(t for t in self._resource_tools if t.name not in seen)
        self._tools = out
        return list(out)

    def servers(self) -> list[McpServerView]:
        views = [
            McpServerView(
                name=c.name,
                scope=c.config.scope,
                transport=c.config.type,
                status=c.status.value,
                tools=len(c.tools) if c.connected or c.status is ServerStatus.RECONNECTING else 0,
                error=c.error,
                startup_s=c.startup_s,
                log_path=str(c.log_path) if c.config.type == "stdio" else None,
                server_info=c.server_info if c.connected else None,
                tool_info=tuple((t.name, t.description or "") for t in c.tools)
                if c.connected
                else (),
            )
            for c in self.connections.values()
        ]
        views += [
            McpServerView(
                name, "project", s.type, "needs approval", 0, None, None, None, describe(s)
            )
            for name, s in self.pending.items()
        ]
        return views

    async def close(self) -> None:
        """Stop every server (concurrently, each bounded); idempotent."""
        start = self._start
        if start is not None and not start.done():
            start.cancel()
            await asyncio.wait({start}, timeout=1)
        await asyncio.gather(
            *(c.close() for c in self.connections.values()), return_exceptions=True
        )
        if self._log_handler is not None:
            logging.getLogger("mcp").removeHandler(self._log_handler)
            self._log_handler.close()
            self._log_handler = None


def describe(server: McpServerConfig) -> str:
    """``command args`` of a stdio server, else its url."""
    if server.type == "stdio":
        return " ".join([server.command, *server.args])
    return server.url


def format_servers(views: list[McpServerView]) -> str:
    """A plain-text ``/mcp`` listing."""
    if not views:
        return "No MCP servers configured (.mcp.json, ~/.nerve/mcp.json, ~/.claude.json)."
    lines = []
    for v in views:
        took = (
            f", {v.startup_s:.2f} s" if v.startup_s is not None and v.status == "connected" else ""
        )
        line = f"{v.name} ({v.scope}, {v.transport}): {v.status}"
        if v.status == "connected":
            line += f", {v.tools} tool(s){took}"
        if v.error:
            line += f" — {v.error}"
        if v.target:
            line += f" — {v.target}"
        lines.append(line)
    if any(v.status == "needs approval" for v in views):
        lines.append("Approve with /mcp approve all|none|<server>... (saved in local settings).")
    return "\n".join(lines)
