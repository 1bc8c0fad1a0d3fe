"""The SDK's context requests: ``get_context_usage``, ``rewind_files``, and the replayed prompts.

``context_usage_response`` is ``/context``'s breakdown (``ContextOps.context_usage``) in
the shape ``claude_agent_sdk.types.ContextUsageResponse`` declares: ``categories`` (name,
tokens, color), ``totalTokens``, ``maxTokens`` (the compaction threshold when auto-compaction is
on, else the window), ``rawMaxTokens`` (the window), ``percentage`` (of the window), ``model``,
``isAutoCompactEnabled``, the MCP and built-in tools one by one, and the message breakdown.

``rewind_files_response`` puts the files back as they were before a prompt (the checkpoints
``/rewind`` uses; the conversation stays). The prompt is named by its uuid, which the SDK learns
from the ``user`` frame Nerve echoes for each prompt under ``--replay-user-messages``
(``replay_prompts``): that uuid is the prompt's transcript record, so it stays valid on resume.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from agent_cli.frontends.sdk.control import ControlError
from agent_cli.loop.context_meter import estimate_tokens

__all__ = ["context_usage_response", "replay_prompts", "rewind_files_response"]

# Claude Code's category names (its /context), with the Nerve parts each one sums.
_CATEGORIES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("System prompt", ("System prompt",), "promptBorder"),
    ("System tools", ("Built-in tools",), "inactive"),
    ("MCP tools", ("MCP tools",), "cyan_FOR_SUBAGENTS_ONLY"),
    ("Memory files", ("Memory files",), "claude"),
    ("Messages", ("Messages", "Tool results"), "purple_FOR_SUBAGENTS_ONLY"),
)


def _server_of(tool_name: str) -> str:
    parts = tool_name.split("__")
    return parts[1] if len(parts) >= 3 else ""


def context_usage_response(session: Any) -> dict[str, Any]:
    """``get_context_usage``: the session's context breakdown as the SDK declares it."""
    usage = session.context_usage()
    parts = dict(usage.parts)
    categories: list[dict[str, Any]] = [
        {"name": name, "tokens": sum(parts.get(p, 0) for p in sources), "color": color}
        for name, sources, color in _CATEGORIES
    ]
    if parts.get("Deferred tools"):
        categories.append(
            {
                "name": "Deferred tools",
                "tokens": parts["Deferred tools"],
                "color": "inactive",
                "isDeferred": True,
            }
        )
    total = max(usage.total, usage.used)
    if usage.buffer:
        categories.append(
            {"name": "Autocompact buffer", "tokens": usage.buffer, "color": "inactive"}
        )
    categories.append({"name": "Free space", "tokens": usage.free, "color": "promptBorder"})
    loop = session.loop
    loaded = loop.ctx.options.loaded_deferred
    mcp_tools: list[dict[str, Any]] = []
    system_tools: list[dict[str, Any]] = []
    for tool in loop.tools:
        deferred = tool.should_defer and tool.name not in loaded
        tokens = estimate_tokens(tool.api_schema(deferred=deferred))
        if tool.is_mcp:
            mcp_tools.append(
                {
                    "name": tool.name,
                    "serverName": _server_of(tool.name),
                    "tokens": tokens,
                    "isLoaded": not deferred,
                }
            )
        else:
            system_tools.append({"name": tool.name, "tokens": tokens, "isDeferred": deferred})
    body: dict[str, Any] = {
        "categories": categories,
        "totalTokens": total,
        "maxTokens": usage.threshold if usage.auto else usage.window,
        "rawMaxTokens": usage.window,
        "percentage": round(100 * total / usage.window, 1) if usage.window else 0.0,
        "model": usage.model,
        "isAutoCompactEnabled": usage.auto,
        "memoryFiles": [],
        "mcpTools": mcp_tools,
        "agents": [],
        "gridRows": [],
        "systemTools": system_tools,
        "messageBreakdown": {
            "messageTokens": parts.get("Messages", 0),
            "toolResultTokens": parts.get("Tool results", 0),
            "measured": usage.measured,
        },
    }
    if usage.auto:
        body["autoCompactThreshold"] = usage.threshold
    return body


def rewind_files_response(session: Any, request: dict[str, Any]) -> dict[str, Any]:
    """``rewind_files``: each file touched since the prompt back to its state before it."""
    message_id = request.get("user_message_id")
    if not isinstance(message_id, str) or not message_id:
        raise ControlError('rewind_files needs a "user_message_id" (a user message uuid)')
    try:
        result = session.rewind(message_id, conversation=False, files=True)
    except ValueError as exc:
        raise ControlError(str(exc)) from exc
    if result.errors:
        raise ControlError("the rewind failed: " + "; ".join(result.errors))
    changed = [c.path for c in result.files if c.action != "unrestorable"]
    skipped = [f"{c.path} ({c.reason})" for c in result.files if c.action == "unrestorable"]
    body: dict[str, Any] = {"canRewind": True, "filesChanged": changed}
    if skipped:
        body["unrestorable"] = skipped
    return body


def replay_prompts(session: Any, write: Callable[[dict[str, Any]], None]) -> None:
    """Echo each prompt as a ``user`` frame carrying its uuid (``--replay-user-messages``).

    Wraps the recorder's ``user`` (after the stream-json writer has: the turn's ``init`` goes
    out first). Tool results and meta messages are not prompts and are not echoed.
    """
    recorder = session.loop.recorder
    original = recorder.user

    def user(message: dict[str, Any], **extra: Any) -> str | None:
        uid = original(message, **extra)
        content = message.get("content")
        is_result = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        if message.get("role") == "user" and not extra.get("isMeta") and not is_result:
            uid = uid or str(uuid.uuid4())  # the loop keys the checkpoint by what we return
            clean = {k: v for k, v in message.items() if not k.startswith("_")}
            write(
                {
                    "type": "user",
                    "message": clean,
                    "parent_tool_use_id": None,
                    "isReplay": True,
                    "session_id": session.session_id,
                    "uuid": uid,
                }
            )
        return uid

    recorder.user = user
