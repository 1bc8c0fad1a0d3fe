"""An MCP permission-prompt tool for ``--permission-prompt-tool mcp__approver__approve``:
``python approver_server.py``. ``approve`` allows ``touch allowed.txt``, rewrites ``touch
REWRITE.txt`` to ``touch rewritten.txt``, answers garbage for ``touch garbage.txt`` and denies
anything else with a message. Every call is appended as JSON to
the file named by ``APPROVER_LOG``."""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("approver")


@server.tool()
def approve(tool_name: str, input: dict[str, Any], tool_use_id: str | None = None) -> str:
    with open(os.environ["APPROVER_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"tool_name": tool_name, "input": input}) + "\n")
    command = str(input.get("command", ""))
    if command == "touch garbage.txt":
        return "certainly, go ahead"
    if command == "touch REWRITE.txt":
        rewritten = {**input, "command": "touch rewritten.txt"}
        return json.dumps({"behavior": "allow", "updatedInput": rewritten})
    if tool_name == "Bash" and command == "touch allowed.txt":
        return json.dumps({"behavior": "allow", "updatedInput": input})
    return json.dumps({"behavior": "deny", "message": f"the approver refuses {tool_name}"})


if __name__ == "__main__":
    server.run()
