"""A small real MCP server over stdio for the tests: ``python demo_server.py [NAME]``.

Tools: ``add`` (read-only), ``echo``, ``fail`` (an is_error result), ``big`` (n chars),
``image`` (a 1x1 PNG), ``structured`` (structured content only), ``crash`` (the process dies
mid-call), ``sleep`` (never answers in time), ``wide`` (declares a larger result limit),
``env`` (reads an environment variable), ``delete_all`` (destructive hint), ``steps``
(progress notifications), ``ask_name`` (an elicitation form), ``roots`` (the client's roots),
``pid`` (the server's process id). A resource ``demo://readme`` and a template, a prompt
``review``.
``python demo_server.py NAME --http PORT`` serves streamable HTTP on 127.0.0.1 instead,
``--sse PORT`` the legacy SSE transport.
"""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)

server = MCPServer(sys.argv[1] if len(sys.argv) > 1 else "demo")
TRANSPORT = sys.argv[2] if len(sys.argv) > 3 else "--stdio"
HTTP_PORT = int(sys.argv[3]) if len(sys.argv) > 3 else None
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


@server.tool()
async def steps(n: int, ctx: Context) -> str:
    """Report n progress notifications, then answer."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"did {n} steps"


class Person(BaseModel):
    name: str = Field(description="Your name")
    colour: str = Field(json_schema_extra={"enum": ["red", "green"]})
    age: int
    subscribe: bool = False


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the user for their name through an elicitation form."""
    result = await ctx.elicit("Who are you?", Person)
    if result.action != "accept":
        return f"elicitation {result.action}"
    p = result.data
    return f"hello {p.name}, {p.age}, {p.colour}, subscribe={p.subscribe}"


@server.tool()
async def roots(ctx: Context) -> str:
    """The client's roots, one URI a line."""
    listed = await ctx.session.list_roots()
    return "\n".join(str(r.uri) for r in listed.roots)


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.resource("demo://readme", mime_type="text/markdown", description="The demo readme")
def readme() -> str:
    return "# Demo\nA resource of the demo server."


@server.resource("demo://big")
def big_resource() -> str:
    return "r" * 120_000


@server.prompt(description="Review a file with a focus")
def review(path: str, focus: str = "bugs") -> str:
    return f"Review {path} looking for {focus}."


if __name__ == "__main__":
    if HTTP_PORT is None:
        server.run()
    elif TRANSPORT == "--sse":
        server.run("sse", host="127.0.0.1", port=HTTP_PORT)
    else:
        server.run("streamable-http", host="127.0.0.1", port=HTTP_PORT)
