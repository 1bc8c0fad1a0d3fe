"""An MCP transport whose far end is the Agent SDK's in-process server (``{"type": "sdk"}``).

The SDK runs ``create_sdk_mcp_server`` servers inside the host program; the CLI reaches them
by sending each JSON-RPC message as an ``mcp_message`` control request and reading the reply
from its answer (``claude_agent_sdk/_internal/query.py``). Here that round trip is an injected
``SdkMcpSend`` (server name, JSON-RPC message) -> reply, so ``tools/`` knows nothing of the
control channel; the normal ``mcp.ClientSession`` runs ``initialize``, ``tools/list`` and
``tools/call`` over a pair of memory streams.

Each message is sent in its own task (a slow tool call does not hold up the others). A reply
is passed on only for a request (a notification's ack is dropped). A send that fails, or a
reply that is not JSON-RPC, becomes a JSON-RPC error on that request's id: the one call fails
with the reason, the session goes on.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

__all__ = ["SDK_ONLY", "SdkMcpSend", "sdk_client"]

# (server name, JSON-RPC message) -> the JSON-RPC reply (None for a notification).
SdkMcpSend = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]

SDK_ONLY = (
    'an in-process SDK server ("type": "sdk") is reachable only when the Agent SDK drives '
    "nerve (--input-format stream-json); its tools are unavailable here"
)
_INTERNAL_ERROR = -32603


def _error(request_id: Any, message: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": _INTERNAL_ERROR, "message": message},
    }


@contextlib.asynccontextmanager
async def sdk_client(server: str, send: SdkMcpSend) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for ``mcp.ClientSession``, talking to SDK server ``server``."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def deliver(raw: dict[str, Any]) -> None:
        request_id = raw.get("id")
        is_request = "method" in raw and request_id is not None
        try:
            reply = await send(server, raw)
        except Exception as exc:
            reply = _error(request_id, f"SDK MCP server {server}: {exc}")
        if not is_request:
            return
        if not isinstance(reply, dict):
            reply = _error(request_id, f"SDK MCP server {server} sent no reply")
        try:
            message = jsonrpc_message_adapter.validate_python(reply, by_name=False)
        except ValueError as exc:
            why = str(exc).splitlines()[0]
            message = jsonrpc_message_adapter.validate_python(
                _error(request_id, f"SDK MCP server {server} sent a malformed reply: {why}")
            )
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.send(SessionMessage(message))

    async def pump(tg: Any) -> None:
        async with from_session:
            async for item in from_session:
                dumped = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                tg.start_soon(deliver, json.loads(dumped))

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump, tg)
        try:
            yield read_stream, write_stream
        finally:
            tg.cancel_scope.cancel()
            for stream in (to_session, read_stream, write_stream, from_session):
                stream.close()
