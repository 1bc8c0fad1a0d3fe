"""WebFetch: fetch a URL, turn it into Markdown, and have the fast model answer a prompt on it.

As in Claude Code: ``http://`` is upgraded to ``https://`` (loopback excepted), a redirect to
another host comes back as text for the model to follow with a new call (so the user's
``WebFetch(domain:...)`` rules judge the new host), HTML becomes Markdown, a page is cached for
15 minutes, and the prompt is applied to the page by the session's fast model (the side-model
port, ``tools.side_model``): the model reads the answer, not the page. Without a side model
(a bare pipeline) the page itself, truncated, is the answer.

Permissions are the engine's ``fetch`` kind: ``WebFetch(domain:example.com)`` allow / ask /
deny rules; otherwise it asks, and the prompt's "don't ask again" choice allows the domain.
The tool is read-only (plan mode may ask for it) and runs in parallel with other reads.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import ToolKind
from tools.base import build_tool
from tools.context import ToolUseContext
from tools.errors import ToolExecutionError
from tools.result import ToolResult, ValidationError
from tools.side_model import FAST, SideModelError, SideRequest, get_side_model

if TYPE_CHECKING:
    from tools.builtin._web_http import CrossHostRedirect, FetchedPage

__all__ = [
    "TOOLS",
    "WEB_FETCH",
    "WebFetchInput",
    "WebFetchOutput",
    "page_prompt",
    "redirect_message",
]

MAX_URL_LENGTH = 2000

_DESCRIPTION = """\
Fetch a URL and answer a prompt about its content. The page is fetched (HTML converted to \
Markdown) and a small, fast model answers your prompt from it; you receive that answer, not \
the raw page.

- url: a fully-formed URL; http:// is upgraded to https://.
- prompt: what to extract or answer from the page.
- Read-only; pages are cached for 15 minutes, so asking again about the same URL is fast.
- When the URL redirects to a different host, you get the redirect URL back: call WebFetch \
again with it if you want to follow it.
- If an MCP tool offers web fetching, prefer it. For GitHub use the gh CLI via Bash."""

SYSTEM = (
    "You answer a question about one web page for a coding assistant. Use only the page "
    "content you are given; if it does not contain the answer, say so."
)


class WebFetchInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str = Field(description="The URL to fetch")
    prompt: str = Field(min_length=1, description="What to extract or answer from the page")


class WebFetchOutput(BaseModel):
    url: str
    code: int
    code_text: str
    bytes: int
    result: str
    duration_ms: int
    cached: bool = False


def page_prompt(content: str, prompt: str) -> str:
    """The fast model's request: the page, then the prompt and how to answer."""
    return (
        f"Web page content:\n---\n{content}\n---\n\n{prompt}\n\n"
        "Answer concisely from the content above only. Quote at most 125 characters of the "
        "page at a time, in quotation marks; otherwise use your own words. Keep code, "
        "commands and identifiers exact."
    )


def redirect_message(redirect: CrossHostRedirect, prompt: str) -> str:
    return (
        "REDIRECT DETECTED: The URL redirects to a different host.\n\n"
        f"Original URL: {redirect.original_url}\n"
        f"Redirect URL: {redirect.redirect_url}\n"
        f"Status: {redirect.status} {redirect.reason}\n\n"
        "To read the redirected page, call WebFetch again with these parameters:\n"
        f'- url: "{redirect.redirect_url}"\n'
        f'- prompt: "{prompt}"'
    )


async def _validate(inp: WebFetchInput, _ctx: ToolUseContext) -> ValidationError | None:
    url = inp.url.strip()
    if len(url) > MAX_URL_LENGTH:
        return ValidationError(f"The URL is longer than {MAX_URL_LENGTH} characters.", "url")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port
    except ValueError:
        return ValidationError(f"Invalid URL {url!r}.", "url")
    if parts.scheme.lower() not in ("http", "https") or not host:
        return ValidationError(
            f"Invalid URL {url!r}: give a full http:// or https:// URL with a host.", "url"
        )
    if parts.username or parts.password:
        return ValidationError("URLs with a user name or password are not fetched.", "url")
    return None


def _backfill(inp: WebFetchInput, _ctx: ToolUseContext) -> WebFetchInput:
    from tools.builtin._web_http import upgrade_url

    # Rules, hooks and the prompt see the URL that will really be fetched.
    return inp.model_copy(update={"url": upgrade_url(inp.url)})


async def _get_page(url: str, ctx: ToolUseContext) -> tuple[FetchedPage | CrossHostRedirect, bool]:
    from tools.builtin._web_cache import page_cache
    from tools.builtin._web_http import FetchedPage, FetchError, fetch_limits, fetch_page

    cache = page_cache(ctx)
    cached = cache.get(url)
    if isinstance(cached, FetchedPage):
        return cached, True
    try:
        page = await fetch_page(url, fetch_limits(ctx))
    except FetchError as exc:
        raise ToolExecutionError(exc.message) from None
    if isinstance(page, FetchedPage):
        cache.put(url, page)
    return page, False


def _shown(page: FetchedPage, limit: int) -> str:
    content = page.content
    if len(content) > limit:
        content = content[:limit] + "\n\n[Content truncated: the page is longer than shown.]"
    return content


async def _answer(page: FetchedPage, inp: WebFetchInput, ctx: ToolUseContext) -> str:
    from tools.builtin._web_http import fetch_limits

    limits = fetch_limits(ctx)
    content = _shown(page, limits.max_markdown_chars)
    side = get_side_model(ctx)
    if side is None:
        return f"(The prompt could not be applied: no model is available here.)\n\n{content}"
    request = SideRequest(
        system=SYSTEM,
        messages=[{"role": "user", "content": page_prompt(content, inp.prompt)}],
        model=FAST,
        max_tokens=4096,
    )
    try:
        reply = await side.query(request, ctx.abort)
    except SideModelError as exc:
        raise ToolExecutionError(
            f"Fetched {page.url} but the fast model could not answer the prompt: {exc.message}"
        ) from None
    return reply.text.strip() or "(The model gave no answer for this page.)"


async def _call(inp: WebFetchInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    # The HTTP side (and httpx, BeautifulSoup) loads on the first fetch, not at start-up.
    from tools.builtin._web_http import CrossHostRedirect, upgrade_url

    started = time.perf_counter()
    url = upgrade_url(inp.url)
    page, cached = await _get_page(url, ctx)
    if isinstance(page, CrossHostRedirect):
        out = WebFetchOutput(
            url=url,
            code=page.status,
            code_text=page.reason,
            bytes=0,
            result=redirect_message(page, inp.prompt),
            duration_ms=int((time.perf_counter() - started) * 1000),
        )
        return ToolResult(out)
    result = await _answer(page, inp, ctx)
    if page.truncated:
        result += (
            f"\n\n[Only the first {page.bytes:,} bytes of the page were read: it is larger "
            "than the fetch limit.]"
        )
    out = WebFetchOutput(
        url=page.url,
        code=page.status,
        code_text=page.reason,
        bytes=page.bytes,
        result=result,
        duration_ms=int((time.perf_counter() - started) * 1000),
        cached=cached,
    )
    return ToolResult(out)


def _to_content(data: Any) -> str:
    return data.result if isinstance(data, WebFetchOutput) else str(data)


def _size(n: int) -> str:
    return f"{n / 1024:.1f} KB" if n >= 1024 else f"{n} bytes"


def _render_result(data: Any) -> str:
    if not isinstance(data, WebFetchOutput):
        return str(data)
    if data.bytes == 0 and data.result.startswith("REDIRECT DETECTED"):
        return f"Redirected to another host ({data.code})"
    note = ", cached" if data.cached else ""
    return f"Received {_size(data.bytes)} ({data.code} {data.code_text}{note})"


WEB_FETCH = build_tool(
    name="WebFetch",
    input_model=WebFetchInput,
    call=_call,
    description=_DESCRIPTION,
    search_hint="fetch a web page url and read or summarise it",
    is_read_only=True,
    is_concurrency_safe=True,
    permission_kind=ToolKind.FETCH,
    validate_input=_validate,
    backfill_input=_backfill,
    to_content=_to_content,
    render_call=lambda inp: inp.url,
    render_result=_render_result,
    max_result_size_chars=100_000,
)

TOOLS = (WEB_FETCH,)
