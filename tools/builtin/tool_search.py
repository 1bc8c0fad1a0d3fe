"""ToolSearch: load the full schemas of deferred tools (mostly MCP) on demand.

Deferred tools go to the API by name only. The model asks for them here, either exactly
(``select:<name>[,<name>…]``) or by keywords scored against name, search hint and description.
The result carries the full schemas; the context modifier adds the names to
``options.loaded_deferred`` so later requests send those tools in full.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from tools.base import Tool, build_tool, empty_list
from tools.context import ToolUseContext
from tools.result import ToolResult

__all__ = ["TOOLS", "TOOL_SEARCH", "ToolSearchInput", "ToolSearchOutput", "search_tools"]

_DESCRIPTION = (
    "Load the full schema of deferred tools so you can call them. Deferred tools are listed "
    'by name only; calling one before loading it fails. Use query "select:<name>[,<name>...]" '
    "to load tools by exact name, or keywords to search names and descriptions."
)


class ToolSearchInput(BaseModel):
    query: str = Field(
        min_length=1,
        description='"select:<tool_name>[,<tool_name>...]" for exact names, or search keywords',
    )
    max_results: int = Field(5, ge=1, le=50, description="Maximum number of tools to return")


class ToolSearchOutput(BaseModel):
    query: str
    matches: list[dict[str, Any]] = Field(default_factory=empty_list)
    missing: list[str] = Field(default_factory=empty_list)
    available: list[str] = Field(default_factory=empty_list)


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _score(tool: Tool[Any], terms: Sequence[str]) -> int:
    name = tool.name.lower()
    name_words = _words(tool.name)
    hint = tool.search_hint.lower()
    description = tool.description.lower()
    score = 0
    for term in terms:
        if term == name:
            score += 10
        elif term in name_words:
            score += 5
        elif term in name:
            score += 3
        if term in hint:
            score += 2
        if term in description:
            score += 1
    return score


def search_tools(
    tools: Sequence[Tool[Any]], query: str, max_results: int
) -> tuple[list[Tool[Any]], list[str]]:
    """The tools a query selects (and, for ``select:``, the names not found)."""
    query = query.strip()
    if query.lower().startswith("select:"):
        wanted = [n.strip() for n in query[len("select:") :].split(",") if n.strip()]
        found: list[Tool[Any]] = []
        missing: list[str] = []
        for name in wanted:
            tool = next((t for t in tools if name in t.all_names), None)
            if tool is None:
                tool = next((t for t in tools if t.name.lower() == name.lower()), None)
            if tool is None:
                missing.append(name)
            elif tool not in found:
                found.append(tool)
        return found, missing
    terms = [t for t in re.split(r"[\s,]+", query.lower()) if t]
    deferred = [t for t in tools if t.should_defer]
    scored = sorted(
        ((s, t) for t in deferred if (s := _score(t, terms)) > 0),
        key=lambda st: (-st[0], st[1].name),
    )
    return [t for _, t in scored[:max_results]], []


async def _call(inp: ToolSearchInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    tools = list(ctx.options.tools)
    found, missing = search_tools(tools, inp.query, inp.max_results)
    output = ToolSearchOutput(
        query=inp.query,
        matches=[t.api_schema() for t in found],
        missing=missing,
        available=sorted(
            t.name for t in tools if t.should_defer and t.name not in ctx.options.loaded_deferred
        )[:100],
    )
    names = frozenset(t.name for t in found)
    if not names:
        return ToolResult(output)

    def load(c: ToolUseContext) -> ToolUseContext:
        options = dataclasses.replace(c.options, loaded_deferred=c.options.loaded_deferred | names)
        return dataclasses.replace(c, options=options)

    return ToolResult(output, context_modifier=load)


def _to_content(data: Any) -> str:
    out = data if isinstance(data, ToolSearchOutput) else ToolSearchOutput.model_validate(data)
    lines: list[str] = []
    if out.matches:
        names = ", ".join(m["name"] for m in out.matches)
        lines.append(f"Loaded {len(out.matches)} tool(s): {names}. You can call them now.")
        lines.append("<functions>")
        lines += [
            f"<function>{json.dumps(m, ensure_ascii=False, sort_keys=True)}</function>"
            for m in out.matches
        ]
        lines.append("</functions>")
    else:
        lines.append(f'No matching deferred tools found for "{out.query}".')
        if out.available:
            lines.append("Deferred tools: " + ", ".join(out.available))
    if out.missing:
        lines.append("Not found: " + ", ".join(out.missing))
    return "\n".join(lines)


TOOL_SEARCH = build_tool(
    name="ToolSearch",
    input_model=ToolSearchInput,
    call=_call,
    description=_DESCRIPTION,
    search_hint="find load deferred tool schema",
    is_read_only=True,
    is_concurrency_safe=True,
    to_content=_to_content,
    render_call=lambda inp: inp.query,
)

TOOLS: tuple[Tool[Any], ...] = (TOOL_SEARCH,)
