"""The ``result`` frame (the last line of ``--output-format stream-json``, the whole output of
``--output-format json``) in Claude Code's shape, and the values other frames share with it.

Field for field as Claude Code 2.1 writes it (see the fixture test,
``tests/agent_cli/frontends/stream_json/test_schema.py``): ``stop_reason`` is the API's stop
reason of the last answer (None when the turn ended without one) and ``terminal_reason`` why the
loop ended (``completed``, ``max_turns``, ``budget_exhausted``, ``api_error``, ``aborted_tools``
/ ``aborted_streaming``; ``blocked`` and ``error`` are Nerve's own for a prompt a hook blocked
and an internal error). An API error that ended the turn is reported as Claude Code does: subtype
``success`` with ``is_error``, ``api_error_status``/``api_error_type`` and the message as
``result``. The error subtypes carry ``errors`` (Claude Code's wording for the limits) and no
``result``. Usage fields Nerve does not get from the API take Claude Code's defaults for an API
that did not say (``service_tier`` "standard", ``thinking_tokens`` 0...); ``costBasis`` is
"list": the cost is Nerve's estimate from list prices.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Mapping
from typing import Any

from agent_cli.loop.events import TurnFinished
from tools.records import datarecord

__all__ = [
    "EarlierResults",
    "api_error_category",
    "local_command_frame",
    "model_usage",
    "now_iso",
    "result_frame",
    "result_subtype",
    "terminal_reason",
]

_SUBTYPES = {
    "max_turns": "error_max_turns",
    "max_budget": "error_max_budget_usd",
    "error": "error_during_execution",
    "aborted": "error_during_execution",
    "blocked": "error_during_execution",
}
_TERMINAL = {
    "max_turns": "max_turns",
    "max_budget": "budget_exhausted",
    "aborted": "aborted_streaming",
    "error": "error",
    "blocked": "blocked",
}
# Claude Code's short names for a failed API call (api_retry's ``error``, an error message's)
_CATEGORIES = {
    400: "invalid_request",
    401: "authentication_failed",
    402: "billing_error",
    403: "permission_denied",
    404: "model_not_found",
    413: "request_too_large",
    429: "rate_limit",
    529: "overloaded",
}


def now_iso() -> str:
    """The time as Claude Code writes ``timestamp``/``written_at`` (UTC, milliseconds, Z)."""
    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def api_error_category(status: int | None, error_type: str | None = None) -> str:
    """``server_error``, ``rate_limit``, ``overloaded``... for an HTTP status (or error type)."""
    if error_type == "overloaded_error":
        return "overloaded"
    if status is None:
        return "connection_error"
    if status >= 500 and status != 529:
        return "server_error"
    return _CATEGORIES.get(status, "unknown")


def result_subtype(stop_reason: str) -> str:
    return _SUBTYPES.get(stop_reason, "success")


def terminal_reason(finished: TurnFinished, api_error: bool = False, tools: bool = False) -> str:
    """Why the loop ended; ``tools``: the last answer asked for tools (an interrupt then
    stopped them, ``aborted_tools``, rather than the stream)."""
    if api_error:
        return "api_error"
    if finished.stop_reason == "aborted" and tools:
        return "aborted_tools"
    return _TERMINAL.get(finished.stop_reason, "completed")


def _limit_errors(session: Any, finished: TurnFinished) -> list[str]:
    options = getattr(session, "options", None)
    if finished.stop_reason == "max_turns":
        return [f"Reached maximum number of turns ({getattr(options, 'max_turns', None)})"]
    if finished.stop_reason == "max_budget":
        budget = float(getattr(options, "max_budget_usd", 0) or 0)
        return [f"Reached maximum budget (${f'{budget:f}'.rstrip('0').rstrip('.')})"]
    return []


def _asked_for_tools(session: Any) -> bool:
    """The conversation's last answer has tool calls."""
    for message in reversed(session.loop.messages):
        if message.get("role") == "assistant":
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            return any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)
    return False


def _last_api_stop_reason(session: Any, finished: TurnFinished) -> str | None:
    """The API's stop reason of the turn's last answer (what Claude Code's result says)."""
    if finished.stop_reason not in _SUBTYPES:
        return finished.stop_reason or None
    if finished.stop_reason in ("max_turns", "aborted") and _asked_for_tools(session):
        return "tool_use"  # the answer's, whose tools then ran out of turns or were stopped
    return None


def _web_searches(session: Any) -> int:
    """Server-side web searches in the current turn's answers (since the last typed prompt)."""
    count = 0
    for message in reversed(session.loop.messages):
        content = message.get("content")
        if message.get("role") == "user":
            if not isinstance(content, list) or not any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content
            ):
                break
            continue
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "server_tool_use":
                count += block.get("name") == "web_search"
    return count


def api_usage(usage: Mapping[str, Any], web_searches: int = 0) -> dict[str, Any]:
    """A turn's usage with the fields Claude Code adds to the API's four counts."""
    cache_creation = int(usage.get("cache_creation_input_tokens", 0) or 0)
    return {
        "input_tokens": int(usage.get("input_tokens", 0) or 0),
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": int(usage.get("cache_read_input_tokens", 0) or 0),
        "output_tokens": int(usage.get("output_tokens", 0) or 0),
        "output_tokens_details": {"thinking_tokens": 0},
        "server_tool_use": {"web_search_requests": web_searches, "web_fetch_requests": 0},
        "service_tier": "standard",
        # Nerve's cache_control breakpoints are the API's default, 5-minute ephemeral ones
        "cache_creation": {
            "ephemeral_1h_input_tokens": 0,
            "ephemeral_5m_input_tokens": cache_creation,
        },
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
        "fallback_credit": None,
    }


def _provider(session: Any) -> str:
    config = getattr(getattr(session.loop, "model", None), "config", None)
    cloud = getattr(config, "cloud", None)
    return "firstParty" if cloud is None else str(getattr(cloud, "provider", "firstParty"))


def model_usage(session: Any, web_searches: int = 0) -> dict[str, dict[str, Any]]:
    """``modelUsage``: the session's tokens and estimated cost per model, in Claude Code's keys."""
    from agent_cli.model.usage import cost_usd
    from agent_cli.model.windows import context_window

    config = getattr(getattr(session.loop, "model", None), "config", None)
    max_output = int(getattr(config, "max_tokens", 0) or 0)
    environ = getattr(session.ctx.options, "environ", None)
    provider = _provider(session)
    out: dict[str, dict[str, Any]] = {}
    for model, u in session.loop.usage.by_model.items():
        out[model] = {
            "inputTokens": u.input,
            "outputTokens": u.output,
            "cacheReadInputTokens": u.cache_read,
            "cacheCreationInputTokens": u.cache_creation,
            "webSearchRequests": web_searches if model == session.model else 0,
            "costUSD": cost_usd(model, u),
            "contextWindow": context_window(model, environ),
            "maxOutputTokens": max_output,
            "thinkingTokens": 0,
            "cacheCreationEphemeral5mInputTokens": u.cache_creation,
            "cacheCreationEphemeral1hInputTokens": 0,
            "canonicalModel": model,
            "provider": provider,
            "costBasis": "list",
        }
    return out


def usage_since(
    now: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """``model_usage_since_last_result``: ``now`` minus the counts at the previous result."""
    if not before:
        return now
    out: dict[str, dict[str, Any]] = {}
    for model, entry in now.items():
        old = before.get(model, {})
        diff = {
            k: (v - old.get(k, 0) if isinstance(v, (int, float)) and k in _COUNTS else v)
            for k, v in entry.items()
        }
        if any(diff[k] for k in _COUNTS if k in diff):
            out[model] = diff
    return out


_COUNTS = (
    "inputTokens",
    "outputTokens",
    "cacheReadInputTokens",
    "cacheCreationInputTokens",
    "webSearchRequests",
    "costUSD",
    "thinkingTokens",
    "cacheCreationEphemeral5mInputTokens",
    "cacheCreationEphemeral1hInputTokens",
)


@datarecord(frozen=True)
class EarlierResults:
    """This session's results before this one (SDK mode answers many prompts): how many, and
    the ``modelUsage`` of the last."""

    count: int = 0
    usage: dict[str, dict[str, Any]] | None = None


def result_frame(
    session: Any,
    finished: TurnFinished,
    *,
    duration_ms: int,
    duration_api_ms: int,
    errors: list[str],
    api_error: tuple[int | None, str | None] | None = None,
    earlier: EarlierResults = EarlierResults(),
    queued: int = 0,
) -> dict[str, Any]:
    """The ``result`` object. ``api_error``: (status, type) of the API error that ended the
    turn; ``earlier``: this session's earlier results (``result_index`` counts them)."""
    subtype = "success" if api_error is not None else result_subtype(finished.stop_reason)
    is_error = finished.is_error or finished.stop_reason in ("max_turns", "aborted", "max_budget")
    searches = _web_searches(session)
    models = model_usage(session, searches)
    frame: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "api_error_status": None if api_error is None else api_error[0],
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "num_turns": finished.num_turns,
        "stop_reason": _last_api_stop_reason(session, finished),
        "session_id": session.session_id,
        "total_cost_usd": round(session.loop.usage.cost_usd, 6),
        "usage": api_usage(finished.usage, searches),
        "modelUsage": models,
        "permission_denials": session.loop.permission_denials,
        "terminal_reason": terminal_reason(
            finished, api_error is not None, _asked_for_tools(session)
        ),
        "fast_mode_state": "off",
        "result_index": earlier.count,
        "queued_turn_count": queued,
        "model_usage_since_last_result": usage_since(models, earlier.usage),
        "uuid": str(uuid.uuid4()),
        "written_at": now_iso(),
    }
    if api_error is not None:  # the synthetic message saying it stopped there (stream-json)
        frame["stop_reason"] = "stop_sequence"
        frame["api_error_type"] = api_error[1]
        frame["result"] = errors[-1] if errors else finished.result_text
    elif subtype == "success":
        frame["result"] = finished.result_text
    else:
        frame["errors"] = _limit_errors(session, finished) + list(errors)
    return frame


def local_command_frame(
    session: Any, command: str, text: str, *, failed: bool, duration_ms: int
) -> dict[str, Any]:
    """The ``result`` of a slash command that ran without a model turn (``nerve -p /compact``),
    in Claude Code's fields for one: no turns, the session's usage by model, ``local_command``."""
    models = model_usage(session) if session is not None else {}
    cost = session.loop.usage.cost_usd if session is not None else 0.0
    return {
        "type": "result",
        "subtype": "error_during_execution" if failed else "success",
        "is_error": failed,
        "duration_ms": duration_ms,
        "duration_api_ms": 0,
        "num_turns": 0,
        "result": text,
        "stop_reason": None,
        "session_id": getattr(session, "session_id", None),
        "total_cost_usd": round(cost, 6),
        "usage": api_usage({}),
        "modelUsage": models,
        "permission_denials": [],
        "fast_mode_state": "off",
        "local_command": command,
        "queued_turn_count": 0,
        "result_index": 0,
        "model_usage_since_last_result": models,
        "uuid": str(uuid.uuid4()),
        "written_at": now_iso(),
    }
