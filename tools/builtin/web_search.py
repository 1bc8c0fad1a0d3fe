"""WebSearch: search the web through the Messages API's server-side web search tool.

The tool makes one side request (``tools.side_model``) on the session's model with the server
tool ``web_search_20250305`` (``allowed_domains`` / ``blocked_domains`` passed through); the
API runs the searches and streams back ``server_tool_use`` blocks (the queries) and
``web_search_tool_result`` blocks (titles and URLs), plus the model's summary. The tool renders
them as results with their URLs. An endpoint that does not support the server tool (it rejects
the request, or answers without searching) gets a clear ``is_error`` saying so, as does a
search the API reports as failed (``web_search_tool_result_error``).

Sending a query off the machine needs permission: the tool is read-only for plan mode and for
parallel runs, but its permission kind is ``network`` (no read-only auto-allow); a bare
``WebSearch`` rule allows or denies it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import ToolKind
from tools.base import build_tool, empty_list
from tools.context import ToolUseContext
from tools.errors import ToolExecutionError
from tools.result import ToolResult, ValidationError
from tools.side_model import MAIN, SideModelError, SideReply, SideRequest, get_side_model

__all__ = [
    "SERVER_TOOL_TYPE",
    "TOOLS",
    "WEB_SEARCH",
    "SearchHit",
    "WebSearchInput",
    "WebSearchOutput",
    "parse_reply",
    "server_tool_spec",
]

SERVER_TOOL_TYPE = "web_search_20250305"
MAX_USES = 8
MAX_PAUSES = 3  # "pause_turn" continuations of one long search
ERROR_CODES = {
    "too_many_requests": "the search service is rate limited; try again shortly",
    "max_uses_exceeded": "the search used up its allowed number of searches",
    "query_too_long": "the query is too long; shorten it",
    "invalid_tool_input": "the API rejected the query or its domain filters",
    "unavailable": "the search service is unavailable right now",
}

_DESCRIPTION = """\
Search the web for up-to-date information beyond your training data: current events, recent \
releases, documentation of new versions. Returns result titles and URLs with a summary.

- query: the search query (at least 2 characters).
- allowed_domains: only return results from these domains; blocked_domains: never from \
these. Give one or the other, not both.
- After answering from the results, list the sources you used as markdown links \
([Title](URL))."""

SYSTEM = "You are an assistant for performing a web search tool use."


class WebSearchInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str = Field(min_length=2, description="The search query to use")
    allowed_domains: list[str] | None = Field(
        None, description="Only include search results from these domains"
    )
    blocked_domains: list[str] | None = Field(
        None, description="Never include search results from these domains"
    )


class SearchHit(BaseModel):
    title: str
    url: str
    page_age: str | None = None


class WebSearchOutput(BaseModel):
    query: str
    results: list[SearchHit]
    summary: str = ""
    searches: list[str] = Field(default_factory=empty_list)  # the queries the API ran
    duration_ms: int = 0


def server_tool_spec(inp: WebSearchInput) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": SERVER_TOOL_TYPE, "name": "web_search", "max_uses": MAX_USES}
    if inp.allowed_domains:
        spec["allowed_domains"] = list(inp.allowed_domains)
    if inp.blocked_domains:
        spec["blocked_domains"] = list(inp.blocked_domains)
    return spec


async def _validate(inp: WebSearchInput, _ctx: ToolUseContext) -> ValidationError | None:
    if not inp.query.strip() or len(inp.query.strip()) < 2:
        return ValidationError("The query needs at least 2 characters.", "query")
    if inp.allowed_domains and inp.blocked_domains:
        return ValidationError(
            "Give allowed_domains or blocked_domains, not both in the same search.", "domains"
        )
    return None


def _search_error(content: Any) -> str | None:
    if isinstance(content, dict) and content.get("type") == "web_search_tool_result_error":
        code = str(content.get("error_code") or "unknown")
        return f"{code}: {ERROR_CODES.get(code, 'the search failed')}"
    return None


def parse_reply(
    content: list[dict[str, Any]],
) -> tuple[list[SearchHit], list[str], str, str | None]:
    """(results, queries searched, summary text, the first search error) from the blocks."""
    hits: list[SearchHit] = []
    queries: list[str] = []
    texts: list[str] = []
    error: str | None = None
    seen: set[str] = set()
    for block in content:
        kind = block.get("type")
        if kind == "server_tool_use" and block.get("name") == "web_search":
            q = (block.get("input") or {}).get("query")
            if isinstance(q, str):
                queries.append(q)
        elif kind == "web_search_tool_result":
            inner = block.get("content")
            error = error or _search_error(inner)
            for item in inner if isinstance(inner, list) else []:
                url = item.get("url") if isinstance(item, dict) else None
                if isinstance(url, str) and url not in seen:
                    seen.add(url)
                    hits.append(
                        SearchHit(
                            title=str(item.get("title") or url),
                            url=url,
                            page_age=item.get("page_age"),
                        )
                    )
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return hits, queries, "".join(texts).strip(), error


def _unsupported(exc: SideModelError) -> str:
    what = f"{exc.status} {exc.error_type or ''}".strip() if exc.status else "error"
    return (
        "Web search is not available: the API endpoint rejected the server-side web search "
        f"tool ({SERVER_TOOL_TYPE}) with {what}: {exc.message}. WebSearch needs an endpoint "
        "that supports Anthropic's web search tool (the Anthropic API with web search "
        "enabled for the organisation); answer without it or use WebFetch on a known URL."
    )


async def _search(inp: WebSearchInput, ctx: ToolUseContext) -> SideReply:
    side = get_side_model(ctx)
    if side is None:
        raise ToolExecutionError("Web search is not available here: there is no model to ask.")
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Perform a web search for the query: {inp.query.strip()}"}
    ]
    content: list[dict[str, Any]] = []
    reply = SideReply()
    for _ in range(MAX_PAUSES + 1):
        request = SideRequest(SYSTEM, messages, tools=[server_tool_spec(inp)], model=MAIN)
        try:
            reply = await side.query(request, ctx.abort)
        except SideModelError as exc:
            if exc.status in (400, 404, 405, 422, 501):
                raise ToolExecutionError(_unsupported(exc)) from None
            raise ToolExecutionError(f"Web search failed: {exc.message}") from None
        content += reply.content
        if reply.stop_reason != "pause_turn" or not reply.content:
            break
        # A long search paused mid-turn: send it back as is and the API carries on.
        messages = [*messages, {"role": "assistant", "content": reply.content}]
    return SideReply(content=content, stop_reason=reply.stop_reason, model=reply.model)


async def _call(inp: WebSearchInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    started = time.perf_counter()
    reply = await _search(inp, ctx)
    hits, queries, summary, error = parse_reply(reply.content)
    if error is not None and not hits:
        raise ToolExecutionError(f"Web search failed ({error}).")
    if not queries and not hits:
        raise ToolExecutionError(
            "Web search is not available: the API endpoint answered without running a web "
            f"search, so it probably does not support the server-side tool {SERVER_TOOL_TYPE}. "
            "Answer without it or use WebFetch on a known URL."
        )
    out = WebSearchOutput(
        query=inp.query.strip(),
        results=hits,
        summary=summary,
        searches=queries,
        duration_ms=int((time.perf_counter() - started) * 1000),
    )
    return ToolResult(out)


def _to_content(data: Any) -> str:
    if not isinstance(data, WebSearchOutput):
        return str(data)
    links = json.dumps([{"title": h.title, "url": h.url} for h in data.results], ensure_ascii=False)
    parts = [f'Web search results for query: "{data.query}"', f"Links: {links}"]
    if not data.results:
        parts.append("No results were found.")
    if data.summary:
        parts.append(data.summary)
    parts.append(
        "REMINDER: You MUST include the sources above in your response to the user using "
        "markdown hyperlinks."
    )
    return "\n\n".join(parts)


def _render_result(data: Any) -> str:
    if not isinstance(data, WebSearchOutput):
        return str(data)
    lines = [f"{len(data.results)} result(s) for {data.query!r}"]
    lines += [f"- {h.title} — {h.url}" for h in data.results[:10]]
    return "\n".join(lines)


WEB_SEARCH = build_tool(
    name="WebSearch",
    input_model=WebSearchInput,
    call=_call,
    description=_DESCRIPTION,
    search_hint="search the web internet current information",
    is_read_only=True,
    is_concurrency_safe=True,
    permission_kind=ToolKind.NETWORK,
    validate_input=_validate,
    to_content=_to_content,
    render_call=lambda inp: inp.query,
    render_result=_render_result,
    max_result_size_chars=100_000,
)

TOOLS = (WEB_SEARCH,)
