"""Parts of the stream-json frames that need no writer state: Claude Code's field values for a
session (is it Anthropic's API, is the sandbox on), a tool call's permission decision, a tool
result's text, the usage of a message no model wrote."""

from __future__ import annotations

from typing import Any

__all__ = [
    "model_usage_zero",
    "permission_decision",
    "result_text",
    "sandbox_enabled",
    "served_by_anthropic",
    "server_status",
]


# Nerve's MCP server states Claude Code's (the SDK's McpServerConnectionStatus) do not have,
# as the nearest they have
_MCP_STATUS = {"reconnecting": "pending", "needs approval": "pending", "closed": "disabled"}


def server_status(status: str) -> str:
    """A server's status in Claude Code's words (init frame, the SDK's mcp_status)."""
    return _MCP_STATUS.get(status, status)


def served_by_anthropic(session: Any) -> bool:
    """Requests go to Anthropic's own API (no cloud provider, no other base URL)."""
    config = getattr(session.loop.model, "config", None)
    if config is None or getattr(config, "cloud", None) is not None:
        return False
    url = str(getattr(config, "base_url", None) or "https://api.anthropic.com")
    return url.rstrip("/") == "https://api.anthropic.com"


def sandbox_enabled(session: Any) -> bool:
    sandbox = session.ctx.options.services.sandbox
    return bool(getattr(getattr(sandbox, "config", None), "enabled", False))


def permission_decision(outcome: Any) -> dict[str, Any]:
    """``tool_result_meta``'s ``permission_decision``: accept/reject and who decided."""
    verdict = getattr(outcome, "verdict", None)
    allowed = verdict is None or bool(getattr(verdict, "allowed", True))
    kind = str(getattr(verdict, "kind", "") or "")
    source = "user" if outcome.user_decided else ("hook" if kind == "hook" else "config")
    decision: dict[str, Any] = {"decision": "accept" if allowed else "reject", "source": source}
    if allowed and kind:
        decision["reason_type"] = kind
    return decision


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def model_usage_zero() -> dict[str, Any]:
    """The usage of a message no model wrote (Claude Code's synthetic API error message)."""
    return {
        "output_tokens_details": None,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": None,
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": None,
        "iterations": None,
        "speed": None,
        "fallback_credit": None,
    }
