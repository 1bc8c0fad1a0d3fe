"""An MCP tool as a Nerve ``Tool``: same pipeline, rules, hooks and budgets as a built-in.

* name ``mcp__<server>__<tool>`` (each part normalised to ``[A-Za-z0-9_-]``; over the API's 64
  characters it is cut and given a short hash so it stays unique);
* deferred (sent by name until ToolSearch loads it), ``is_mcp``;
* the server's JSON Schema goes to the API as is; the input model accepts any object and checks
  it against that schema with ``jsonschema``, so bad input gets a concise error (and, for an
  unloaded deferred tool, the pipeline's "call ToolSearch first" hint) without a round trip;
* ``readOnlyHint`` → read-only and concurrency-safe (the permission engine still does not
  auto-allow MCP tools on it: the hint comes from the server); ``destructiveHint`` follows the
  MCP default (true unless read-only or the server says false);
* ``_meta["anthropic/maxResultSizeChars"]`` raises the tool's result limit and output cap;
* a result over the output cap is first written whole to the session's tool-results dir (the
  pipeline budget's); the model gets a preview and the path, so it can Read the rest;
* ``notifications/progress`` are the call's progress; an elicitation during the call asks
  through the context's question port (``tools.mcp.elicit``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from tools.base import DEFAULT_MAX_RESULT_CHARS, Tool, build_tool
from tools.context import ToolUseContext
from tools.errors import ToolExecutionError, ToolTimeoutError
from tools.mcp.client import McpCallError, McpCallTimeout, McpConnection, McpNotConnected
from tools.mcp.config import normalize_name
from tools.mcp.elicit import elicit_via
from tools.mcp.results import convert_result, persist_full
from tools.result import ToolResult

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_TOOL_NAME",
    "McpToolSettings",
    "make_input_model",
    "mcp_tool_name",
    "progress_text",
    "to_nerve_tool",
]

MAX_TOOL_NAME = 64  # the Messages API's limit on tool names
MAX_DESCRIPTION_CHARS = 2_048
_MAX_ISSUES = 5
_MAX_ISSUE_CHARS = 200
_RESULT_SIZE_META = "anthropic/maxResultSizeChars"


class McpToolSettings:
    """Per-session limits for MCP calls (from ``MCP_TOOL_TIMEOUT``, ``MAX_MCP_OUTPUT_TOKENS``)."""

    def __init__(self, *, tool_timeout_s: float, output_tokens: int) -> None:
        self.tool_timeout_s = tool_timeout_s
        self.output_tokens = output_tokens


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, normalised, at most 64 characters."""
    name = f"mcp__{normalize_name(server)}__{normalize_name(tool)}"
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME - 9]}_{digest}"


def _validator(schema: Mapping[str, Any]) -> Callable[[Any], list[tuple[tuple[Any, ...], str]]]:
    """A function input → [(path, message)]; a schema jsonschema cannot use validates nothing
    (the server still validates)."""
    try:
        import jsonschema
        from jsonschema.exceptions import relevance

        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema)
    except Exception:
        return lambda _obj: []

    def check(obj: Any) -> list[tuple[tuple[Any, ...], str]]:
        try:
            errors = sorted(validator.iter_errors(obj), key=relevance)
        except Exception:  # an unresolvable $ref and the like: leave it to the server
            return []
        out = []
        for err in errors[:_MAX_ISSUES]:
            message = err.message
            if len(message) > _MAX_ISSUE_CHARS:
                message = message[:_MAX_ISSUE_CHARS] + "…"
            out.append((tuple(err.absolute_path), message))
        return out

    return check


def make_input_model(tool_name: str, schema: Mapping[str, Any]) -> type[BaseModel]:
    """A permissive model (any keys) whose ``model_validate`` checks the JSON Schema first."""
    check = _validator(schema)

    class McpInput(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def model_validate(cls, obj: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            if obj is None:
                obj = {}
            if not isinstance(obj, dict):
                issues: list[tuple[tuple[Any, ...], str]] = [((), "input must be an object")]
            else:
                issues = check(obj)
            if issues:
                raise ValidationError.from_exception_data(
                    tool_name,
                    [
                        {
                            "type": PydanticCustomError("mcp_schema", "{detail}", {"detail": msg}),
                            "loc": path,
                            "input": None,
                        }
                        for path, msg in issues
                    ],
                )
            return super().model_validate(obj, **kwargs)

    McpInput.__name__ = McpInput.__qualname__ = f"McpInput_{normalize_name(tool_name)}"
    return McpInput


def _api_schema(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    if schema.get("type") != "object":
        return {**schema, "type": "object"}
    return dict(schema)


def _arguments(inp: BaseModel) -> dict[str, Any]:
    return inp.model_dump(mode="json", by_alias=True, exclude_unset=True)


def progress_text(progress: float, total: float | None, message: str | None) -> str:
    """``3/10 indexing`` / ``40% indexing`` / ``3 indexing``."""
    if total:
        amount = f"{progress:g}/{total:g}" if total != 100 else f"{progress:g}%"
    else:
        amount = f"{progress:g}"
    return f"{amount} {message}".strip() if message else amount


def _render_call(inp: BaseModel) -> str:
    text = json.dumps(_arguments(inp), ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


def to_nerve_tool(connection: McpConnection, mcp_tool: Any, settings: McpToolSettings) -> Tool[Any]:
    """Wrap one listed MCP tool (an ``mcp_types.Tool``) for the pool."""
    server = connection.name
    remote_name = str(mcp_tool.name)
    name = mcp_tool_name(server, remote_name)
    schema = _api_schema(getattr(mcp_tool, "input_schema", None))
    annotations = getattr(mcp_tool, "annotations", None)
    read_only = bool(getattr(annotations, "read_only_hint", None))
    destructive_hint = getattr(annotations, "destructive_hint", None)
    destructive = not read_only and destructive_hint is not False
    meta = getattr(mcp_tool, "meta", None) or {}
    declared = meta.get(_RESULT_SIZE_META) if isinstance(meta, dict) else None
    max_chars = DEFAULT_MAX_RESULT_CHARS * 2  # Claude Code's MCP default (100,000)
    declared_chars: int | None = None
    if isinstance(declared, int | float) and not isinstance(declared, bool) and declared > 0:
        declared_chars = int(declared)  # also lifts the token cap for this tool's output
        max_chars = max(max_chars, declared_chars)
    description = str(
        getattr(mcp_tool, "description", None)
        or getattr(mcp_tool, "title", None)
        or f"{remote_name} (MCP tool of server {server})"
    )
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
    timeout_s = (
        connection.config.timeout_ms / 1000
        if connection.config.timeout_ms
        else settings.tool_timeout_s
    )

    async def call(inp: BaseModel, ctx: ToolUseContext, report: Any) -> ToolResult:
        def on_progress(value: float, total: float | None, message: str | None) -> None:
            report(progress_text(value, total, message))

        connection.elicit = elicit_via(ctx.callbacks.ask_user, server)
        try:
            result = await connection.call_tool(
                remote_name, _arguments(inp), timeout_s, progress=on_progress
            )
        except McpNotConnected as exc:
            raise ToolExecutionError(str(exc)) from None
        except McpCallTimeout as exc:
            raise ToolTimeoutError(str(exc)) from None
        except McpCallError as exc:
            raise ToolExecutionError(str(exc)) from None
        converted = convert_result(
            result, token_limit=settings.output_tokens, max_chars=declared_chars
        )
        content = converted.content
        if converted.truncated:
            content = persist_full(result, content, ctx.options.session_dir, settings.output_tokens)
        return ToolResult(content, is_error=converted.is_error)

    return build_tool(
        name=name,
        input_model=make_input_model(name, schema),
        call=call,
        description=description,
        search_hint=f"{server} {remote_name} mcp",
        is_read_only=read_only,
        is_concurrency_safe=read_only,
        is_destructive=destructive,
        should_defer=True,
        is_mcp=True,
        max_result_size_chars=max_chars,
        input_schema_override=schema,
        render_call=_render_call,
    )
