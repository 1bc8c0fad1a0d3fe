"""A small real MCP server over stdio for the tests: ``python demo_server.py [NAME]``.

Tools: ``add`` (read-only), ``echo``, ``fail`` (an is_error result), ``big`` (n chars),
``image`` (a 1x1 PNG), ``structured`` (structured content only), ``crash`` (the process dies
mid-call), ``sleep`` (never answers in time), ``wide`` (declares a larger result limit),
``env`` (reads an environment variable), ``delete_all`` (destructive hint).
``python demo_server.py NAME --http PORT`` serves streamable HTTP on 127.0.0.1 instead.
"""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import CallToolResult, ToolAnnotations

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)

server = MCPServer(sys.argv[1] if len(sys.argv) > 1 else "demo")
HTTP_PORT = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--http" else None
print("demo server starting (stderr goes to the log file)", file=sys.stderr, flush=True)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    raise ToolError(message)


@server.tool()
def big(n: int) -> str:
    """Return n characters."""
    return "x" * n


@server.tool()
def image() -> Image:
    """Return a tiny PNG image."""
    return Image(data=PNG_1X1, format="png")


@server.tool()
def structured() -> CallToolResult:
    """Structured content and no text."""
    return CallToolResult(content=[], structured_content={"answer": 42, "unit": "widgets"})


@server.tool()
def crash() -> str:
    """The server process dies while answering."""
    os._exit(3)


@server.tool()
def sleep(seconds: float) -> str:
    """Sleep (blocking the server) for a while."""
    time.sleep(seconds)
    return "slept"


@server.tool(meta={"anthropic/maxResultSizeChars": 200_000})
def wide(n: int) -> str:
    """Like big, with a larger declared result limit."""
    return "y" * n


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def delete_all() -> str:
    """Pretend to delete everything."""
    return "deleted"


if __name__ == "__main__":
    if HTTP_PORT is None:
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=HTTP_PORT)
