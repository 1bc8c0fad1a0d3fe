"""The session's MCP servers: connected before the first turn, their tools in the pool, ``/mcp``.

``McpServers`` is the part of ``AgentSession`` over the session's ``tools.mcp.McpManager`` (None
when no server is configured: then it has nothing to list and nothing to connect). The servers
start connecting after the UI's first frame (``prewarm``); the first turn awaits that start
(``connect``), then their tools join the loop's pool after the built-ins, as they do again after
each ``/mcp`` action and approval (``agent_cli.session.mcp_approval``). Every server process ends
with the session (``close``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop

__all__ = ["McpServers"]


class McpServers:
    """The MCP servers of ``loop``'s session (``manager``: a ``tools.mcp.McpManager`` or None)."""

    def __init__(self, manager: Any, loop: AgentLoop, cwd: Path) -> None:
        self._manager: Any = manager
        self._loop = loop
        self._cwd = cwd
        self.pending = manager is not None  # not connected yet: the first turn connects them

    # -- lifecycle ---------------------------------------------------------------------------

    def prewarm(self) -> None:
        """Start connecting in the background (after the UI's first frame): servers connect
        while the user types."""
        if self.pending:
            self._manager.set_roots(self._loop.ctx.permissions.working_dirs)
            self._manager.start_soon()

    async def connect(self) -> list[str]:
        """Start the servers (once: nothing when connected) and add their tools after the
        built-ins; the warnings of the start."""
        if not self.pending:
            return []
        self.pending = False
        self._manager.set_roots(self._loop.ctx.permissions.working_dirs)
        warnings: list[str] = await self._manager.start()
        self._pool_tools()
        return warnings

    async def start_now(self) -> None:
        """Connect now if no turn has yet (the SDK's ``mcp_status``). The turn still awaits
        the same start, then adds the tools and shows the warnings."""
        if self.pending:
            self._manager.set_roots(self._loop.ctx.permissions.working_dirs)
            await self._manager.start()

    def attach_sdk(self, send: Any) -> None:
        """SDK mode: the ``{"type": "sdk"}`` servers' messages travel through ``send``."""
        if self._manager is not None:
            self._manager.set_sdk_transport(send)

    async def close(self) -> None:
        if self._manager is not None:
            await self._manager.close()  # every MCP server process ends here

    # -- /mcp --------------------------------------------------------------------------------

    def servers(self) -> list[Any]:
        """``/mcp``: each configured server's status (``tools.mcp.McpServerView``)."""
        return [] if self._manager is None else self._manager.servers()

    def tool(self, name: str) -> Any:
        """The connected MCP tool ``name`` (``mcp__server__tool``), or None."""
        if self._manager is None:
            return None
        return next((t for t in self._manager.tools() if t.name == name), None)

    async def action(self, action: str, name: str) -> str:
        """``/mcp enable|disable|reconnect NAME``; the tool pool follows."""
        if self._manager is None:
            return "No MCP servers configured."
        await self.connect()
        manager = self._manager
        method = {"enable": manager.enable, "disable": manager.disable}.get(
            action, manager.reconnect
        )
        try:
            message: str = await method(name)
        except KeyError as exc:
            return str(exc.args[0])
        self._pool_tools()
        return message

    def pending_approval(self) -> list[tuple[str, str]]:
        """Project servers waiting for approval: (name, command line or url)."""
        from agent_cli.session.mcp_approval import pending_project_servers

        return pending_project_servers(self._manager)

    async def approve(self, choice: list[str] | str) -> list[str]:
        """Use ``"all"``, ``"none"`` or the named project servers (``mcp_approval``)."""
        from agent_cli.session.mcp_approval import approve_project_servers

        if self._manager is None:
            return ["No project MCP servers are waiting for approval."]
        await self.connect()
        messages = await approve_project_servers(self._manager, self._cwd, choice)
        self._pool_tools()
        return messages

    def prompts(self) -> list[tuple[str, str, str]]:
        """``/mcp__server__prompt`` commands: (name, description, argument hint)."""
        if self._manager is None:
            return []
        return [(c[0], c[1], c[2]) for c in self._manager.prompt_commands()]

    async def prompt(self, command: str, args: str) -> str:
        """The text an MCP prompt command expands to (raises with a message for the user)."""
        if self._manager is None:
            raise KeyError(f"no MCP prompt /{command}")
        await self.connect()
        text: str = await self._manager.expand_prompt(command, args)
        return text

    def _pool_tools(self) -> None:
        from tools.mcp.resources import RESOURCE_TOOL_NAMES
        from tools.registry import assemble_tool_pool

        ctx = self._loop.ctx
        builtins = [
            t for t in ctx.options.tools if not t.is_mcp and t.name not in RESOURCE_TOOL_NAMES
        ]
        pool = assemble_tool_pool(builtins, self._manager.tools(), ctx.permissions)
        self._loop.ctx = replace(ctx, options=replace(ctx.options, tools=tuple(pool)))
