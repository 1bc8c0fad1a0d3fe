"""WebFetch against a real HTTP server on 127.0.0.1, the prompt applied by the fast model over
the scripted Messages API (the session's real side model and client)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, http_error, text
from tests.tools.builtin.web_support import PageServer, side_model_for
from tests.tools.pipeline_helpers import ScriptedPrompts, make_ctx, rules
from tools.builtin._web_cache import CACHE_TTL_S, PageCache
from tools.builtin._web_http import (
    FetchLimits,
    fetch_limits,
    is_loopback_host,
    permitted_redirect,
    upgrade_url,
)
from tools.builtin.web_fetch import WEB_FETCH, WebFetchOutput
from tools.context import ToolServices, ToolUseContext
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call

FAST = "claude-haiku-4-5"


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with PageServer() as server:
        yield server


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _ctx(
    api: ScriptedServer | None,
    *,
    clock: Clock | None = None,
    limits: FetchLimits | None = None,
    rule_set: tuple[Any, ...] = rules(("WebFetch(domain:127.0.0.1)", "allow")),
    prompts: ScriptedPrompts | None = None,
    **kw: Any,
) -> ToolUseContext:
    services = ToolServices(
        fetch_limits=limits or FetchLimits(timeout_s=10),
        side_model=side_model_for(api) if api is not None else None,
    )
    ctx = make_ctx(
        (WEB_FETCH,),
        rule_set=rule_set,
        services=services,
        prompts=prompts or ScriptedPrompts(),
        **kw,
    )
    # A cache of the test's own: nothing leaks between tests, and the clock is the test's.
    ctx.state.conversation.web_cache = PageCache(clock=clock or Clock())
    return ctx


async def _fetch(
    ctx: ToolUseContext, url: str, prompt: str = "What does it say?", call_id: str = "w1"
) -> CallOutcome:
    return await run_tool_call(ToolCall(call_id, "WebFetch", {"url": url, "prompt": prompt}), ctx)


def _answer(value: str, **kw: Any) -> Turn:
    return Turn([text(value)], **kw)


def _fast_request(api: ScriptedServer, n: int = 0) -> dict[str, Any]:
    body = api.requests[n].body
    assert body["model"] == FAST, body["model"]
    return body


def _page_text(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


# -- pages ---------------------------------------------------------------------------------


async def test_html_becomes_markdown_and_the_fast_model_answers(pages: PageServer) -> None:
    with ScriptedServer(Scenario.of(_answer("Install it with pip."))) as api:
        out = await _fetch(_ctx(api), pages.url("/page"), "How do I install it?")
    assert not out.is_error, out.tool_result
    assert out.tool_result["content"] == "Install it with pip."
    sent = _page_text(_fast_request(api))
    assert "# Install" in sent and "`pip install nerve`" in sent and "- fast" in sent
    assert "[install](/more)" in sent
    assert "do-not-show" not in sent and "color: red" not in sent  # scripts, styles dropped
    assert "How do I install it?" in sent
    assert isinstance(out.output, WebFetchOutput) and out.output.code == 200
    api.assert_done()


async def test_plain_text_and_json_pass_through(pages: PageServer) -> None:
    scenario = Scenario.of(_answer("two lines"), _answer("1.2.3"))
    with ScriptedServer(scenario) as api:
        ctx = _ctx(api)
        first = await _fetch(ctx, pages.url("/notes.txt"))
        second = await _fetch(ctx, pages.url("/data.json"), call_id="w2")
    assert not first.is_error and not second.is_error
    assert "<b>not html</b>" in _page_text(_fast_request(api, 0))  # text is not converted
    assert '{"version": "1.2.3"}' in _page_text(_fast_request(api, 1))
    api.assert_done()


async def test_same_host_redirect_is_followed(pages: PageServer) -> None:
    with ScriptedServer(Scenario.of(_answer("followed"))) as api:
        out = await _fetch(_ctx(api), pages.url("/old"))
    assert out.tool_result["content"] == "followed"
    assert pages.hits["/old"] == 1 and pages.hits["/page"] == 1
    assert out.output.url == pages.url("/page")
    api.assert_done()


async def test_redirect_to_another_host_comes_back_as_text(pages: PageServer) -> None:
    with ScriptedServer(Scenario.of()) as api:  # no model call may happen
        out = await _fetch(_ctx(api), pages.url("/away"), "Summarise")
    assert not out.is_error, out.tool_result
    content = out.tool_result["content"]
    assert content.startswith("REDIRECT DETECTED")
    assert f'url: "http://localhost:{pages.port}/page"' in content
    assert 'prompt: "Summarise"' in content and "Status: 302" in content
    assert pages.hits["/page"] == 0  # not followed
    api.assert_done()


async def test_redirect_loop_is_an_error(pages: PageServer) -> None:
    limits = FetchLimits(timeout_s=10, max_redirects=3)
    with ScriptedServer(Scenario.of()) as api:
        out = await _fetch(_ctx(api, limits=limits), pages.url("/loop"))
    assert out.is_error and "more than 3 redirects" in out.tool_result["content"]
    assert pages.hits["/loop"] == 4


@pytest.mark.parametrize(
    ("path", "expected"), [("/gone", "HTTP 404 Not Found"), ("/boom", "HTTP 500")]
)
async def test_error_status_is_an_error_result(pages: PageServer, path: str, expected: str) -> None:
    with ScriptedServer(Scenario.of()) as api:
        out = await _fetch(_ctx(api), pages.url(path))
    assert out.is_error
    assert expected in out.tool_result["content"] and pages.url(path) in out.tool_result["content"]
    api.assert_done()


async def test_slow_page_hits_the_time_limit(pages: PageServer) -> None:
    limits = FetchLimits(timeout_s=0.3)
    with ScriptedServer(Scenario.of()) as api:
        out = await _fetch(_ctx(api, limits=limits), pages.url("/slow"))
    assert out.is_error and "timed out after 0.3 s" in out.tool_result["content"]
    assert pages.hits["/slow"] == 1
    api.assert_done()


async def test_huge_page_is_cut_at_the_size_cap(pages: PageServer) -> None:
    limits = FetchLimits(timeout_s=10, max_bytes=64 * 1024, max_markdown_chars=5_000)
    with ScriptedServer(Scenario.of(_answer("lots of words"))) as api:
        out = await _fetch(_ctx(api, limits=limits), pages.url("/huge"))
    assert not out.is_error, out.tool_result
    assert out.output.bytes == 64 * 1024
    assert "Only the first 65,536 bytes" in out.tool_result["content"]
    sent = _page_text(_fast_request(api))
    assert "[Content truncated" in sent and len(sent) < 6_000
    api.assert_done()


@pytest.mark.parametrize(("path", "kind"), [("/logo.png", "image/png"), ("/blob", "binary data")])
async def test_binary_content_is_refused(pages: PageServer, path: str, kind: str) -> None:
    with ScriptedServer(Scenario.of()) as api:
        out = await _fetch(_ctx(api), pages.url(path))
    assert out.is_error
    assert f"is {kind}, not a text or HTML page" in out.tool_result["content"]
    api.assert_done()


# -- cache ---------------------------------------------------------------------------------


async def test_pages_are_cached_for_fifteen_minutes(pages: PageServer) -> None:
    clock = Clock()
    scenario = Scenario.of(_answer("a1"), _answer("a2"), _answer("a3"))
    with ScriptedServer(scenario) as api:
        ctx = _ctx(api, clock=clock)
        first = await _fetch(ctx, pages.url("/page"), "q1")
        clock.now += CACHE_TTL_S - 1
        second = await _fetch(ctx, pages.url("/page"), "q2", call_id="w2")
        assert pages.hits["/page"] == 1  # the second prompt ran on the cached page
        assert second.output.cached and not first.output.cached
        assert "q2" in _page_text(_fast_request(api, 1))
        clock.now += 2
        third = await _fetch(ctx, pages.url("/page"), "q3", call_id="w3")
    assert pages.hits["/page"] == 2 and not third.output.cached
    api.assert_done()


# -- URLs ----------------------------------------------------------------------------------


def test_http_is_upgraded_except_for_loopback() -> None:
    assert upgrade_url("http://example.com/a?b=1") == "https://example.com/a?b=1"
    assert upgrade_url("HTTP://Example.com") == "https://Example.com"
    assert upgrade_url("https://example.com") == "https://example.com"
    for local in ("http://127.0.0.1:8000/x", "http://localhost/x", "http://[::1]:9/x"):
        assert upgrade_url(local) == local
    assert is_loopback_host("127.8.9.10") and not is_loopback_host("10.0.0.1")


def test_default_limits() -> None:
    limits = fetch_limits(make_ctx(()))
    assert limits.max_bytes == 10 * 1024 * 1024 and limits.timeout_s == 60.0
    assert limits.max_markdown_chars == 100_000


def test_which_redirects_are_followed() -> None:
    assert permitted_redirect("https://a.com/x", "https://a.com/y")
    assert permitted_redirect("https://a.com/x", "https://www.a.com/y")
    assert permitted_redirect("https://www.a.com/x", "https://a.com/y")
    assert permitted_redirect("http://a.com/x", "https://a.com/y")  # an upgrade
    assert not permitted_redirect("https://a.com/x", "http://a.com/y")  # a downgrade
    assert not permitted_redirect("https://a.com/x", "https://b.com/y")
    assert not permitted_redirect("https://a.com/x", "https://evil.a.com/y")
    assert not permitted_redirect("https://a.com/x", "https://a.com:8443/y")
    assert not permitted_redirect("https://a.com/x", "https://user:pw@a.com/y")


async def test_the_engine_sees_the_upgraded_url() -> None:
    prompts = ScriptedPrompts()
    ctx = _ctx(None, rule_set=rules(("WebFetch(https://example.com/*)", "deny")), prompts=prompts)
    out = await _fetch(ctx, "http://example.com/page")
    assert (
        out.is_error and "deny rule WebFetch(https://example.com/*)" in out.tool_result["content"]
    )


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/x", "example.com", "https://", "https://u:p@example.com/", "x" * 3000],
)
async def test_bad_urls_are_refused_before_anything_runs(url: str) -> None:
    out = await _fetch(_ctx(None), url)
    assert out.is_error and "URL" in out.tool_result["content"]


# -- the fast model ------------------------------------------------------------------------


async def test_fast_model_failure_is_a_clear_error(pages: PageServer) -> None:
    turn = Turn([text("never")], faults=[http_error(400, "invalid_request_error", "bad model")])
    with ScriptedServer(Scenario([turn])) as api:
        out = await _fetch(_ctx(api), pages.url("/page"))
    assert out.is_error
    assert "the fast model could not answer the prompt: bad model" in out.tool_result["content"]


async def test_without_a_side_model_the_page_itself_is_returned(pages: PageServer) -> None:
    out = await _fetch(_ctx(None), pages.url("/page"))
    assert not out.is_error
    assert "could not be applied" in out.tool_result["content"]
    assert "# Install" in out.tool_result["content"]


async def test_usage_of_the_fast_model_is_counted(pages: PageServer) -> None:
    usage: list[Any] = []
    with ScriptedServer(Scenario.of(Turn([text("ok")], input_tokens=321))) as api:
        ctx = _ctx(api)
        ctx.options.services.side_model = side_model_for(api, usage=usage)
        await _fetch(ctx, pages.url("/page"))
    assert [(m, u.input) for m, u in usage] == [(FAST, 321)]


async def test_matching_the_fast_request_shape(pages: PageServer) -> None:
    """The side request is a one-message conversation for the fast model, no tools."""
    match = Match(
        predicate=lambda b: len(b["messages"]) == 1 and "tools" not in b,
        description="one message, no tools",
    )
    with ScriptedServer(Scenario.of(_answer("fine", match=match))) as api:
        out = await _fetch(_ctx(api), pages.url("/page"))
    assert not out.is_error
    api.assert_done()


def test_cache_is_bounded_by_size() -> None:
    cache: PageCache[str] = PageCache(max_chars=10, size=len)
    cache.put("a", "12345")
    cache.put("b", "12345")
    cache.put("c", "123")
    assert cache.get("a") is None and cache.get("b") == "12345" and cache.get("c") == "123"
    cache.put("huge", "x" * 11)
    assert cache.get("huge") is None
