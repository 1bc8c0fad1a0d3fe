"""What the TypeScript Agent SDK sends in ``initialize`` instead of on the command line.

``@anthropic-ai/claude-agent-sdk`` (0.3.x) passes the system prompt, the external MCP servers
and the names of its in-process MCP servers in the ``initialize`` control request, which it
writes first on stdin (the Python SDK passes the same things as ``--system-prompt`` and
``--mcp-config``). They shape the session, so SDK mode reads that first line before it builds
the session and folds these fields into the run options (``boot_options``):

- ``systemPrompt``: a list of strings (the SDK wraps a plain string in one), joined by blank
  lines with the cache marker ``__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__`` left out; it replaces
  Nerve's prompt as ``--system-prompt`` does, and an empty one (the SDK sends ``[""]`` when the
  caller set none) keeps Nerve's, as ``--system-prompt ""`` does;
- ``appendSystemPrompt`` (the preset's ``append``): as ``--append-system-prompt``;
- ``mcpServers`` (``{name: config}``): as one more ``--mcp-config``;
- ``sdkMcpServers`` (names): each an ``{"type": "sdk"}`` server, reached over ``mcp_message``;
- ``agents`` (``{name: AgentDefinition}``, from both SDKs): as ``--agents``.

``initialize`` answers ``mcp_servers_applied`` when it carried ``mcpServers`` (the SDK ends the
session if the field is missing). A late ``initialize`` (not the first line) cannot change a
session already built: its fields are reported on stderr as not applied.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from agent_cli.options import RunOptions

__all__ = ["BOOT_FIELDS", "DYNAMIC_BOUNDARY", "boot_options", "initialize_request"]

DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
BOOT_FIELDS = ("systemPrompt", "appendSystemPrompt", "mcpServers", "sdkMcpServers", "agents")


def initialize_request(frame: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``request`` of an ``initialize`` control request, else None."""
    if frame is None or frame.get("type") != "control_request":
        return None
    request = frame.get("request")
    if isinstance(request, dict) and request.get("subtype") == "initialize":
        return request
    return None


def _prompt(value: Any) -> str | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return "\n\n".join(v for v in value if v and v.strip() != DYNAMIC_BOUNDARY)


def boot_options(options: RunOptions, request: dict[str, Any]) -> tuple[RunOptions, list[str]]:
    """``options`` with ``request``'s boot fields folded in, and what was wrong with any."""
    problems: list[str] = []
    changes: dict[str, Any] = {}
    if "systemPrompt" in request:
        prompt = _prompt(request["systemPrompt"])
        if prompt is None:
            problems.append("initialize: systemPrompt must be a list of strings; ignored")
        elif prompt:
            changes["system_prompt"] = prompt
    append = request.get("appendSystemPrompt")
    if isinstance(append, str) and append:
        changes["append_system_prompt"] = append
    elif append is not None and not isinstance(append, str):
        problems.append("initialize: appendSystemPrompt must be a string; ignored")
    configs = list(options.mcp_configs) + _mcp_configs(request, problems)
    agents = request.get("agents")
    if isinstance(agents, dict) and agents:
        changes["agents"] = json.dumps(agents)
    elif agents is not None and not isinstance(agents, dict):
        problems.append("initialize: agents must be an object; ignored")
    if configs != options.mcp_configs:
        changes["mcp_configs"] = configs
    return (replace(options, **changes) if changes else options), problems


def _mcp_configs(request: dict[str, Any], problems: list[str]) -> list[str]:
    """The ``--mcp-config`` texts of ``mcpServers`` and ``sdkMcpServers`` (what is wrong with
    either goes to ``problems``)."""
    configs: list[str] = []
    servers = request.get("mcpServers")
    if isinstance(servers, dict) and servers:
        configs.append(json.dumps({"mcpServers": servers}))
    elif servers is not None and not isinstance(servers, dict):
        problems.append("initialize: mcpServers must be an object; ignored")
    names = request.get("sdkMcpServers")
    if isinstance(names, list) and names:
        if all(isinstance(n, str) and n for n in names):
            sdk = {n: {"type": "sdk", "name": n} for n in names}
            configs.append(json.dumps({"mcpServers": sdk}))
        else:
            problems.append("initialize: sdkMcpServers must be a list of names; ignored")
    return configs
