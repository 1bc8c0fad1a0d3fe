"""WebSearch over the scripted Messages API: server-tool blocks streamed back through the real
client, rendered with their URLs; endpoints without the server tool get a clear message."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent_cli.testing import (
    Match,
    Scenario,
    ScriptedServer,
    Turn,
    http_error,
    server_tool_use,
    text,
    web_search_error,
    web_search_result,
)
from permissions.types import PermissionMode, RuleValue
from tests.tools.builtin.web_support import side_model_for
from tests.tools.pipeline_helpers import (
    ScriptedPrompts,
    hook_runner,
    hook_script,
    make_ctx,
    rules,
)
from tools.base import build_tool
from tools.builtin.web_search import SERVER_TOOL_TYPE, WEB_SEARCH, WebSearchOutput
from tools.context import PermissionAnswer, PermissionResponse, ToolServices, ToolUseContext
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call
from tools.registry import assemble_tool_pool
from tools.result import ToolResult

MAIN = "claude-sonnet-4-5"
ALLOW = rules(("WebSearch", "allow"))


def _ctx(api: ScriptedServer | None, **kw: Any) -> ToolUseContext:
    services = ToolServices(side_model=side_model_for(api) if api is not None else None)
    kw.setdefault("rule_set", ALLOW)
    kw.setdefault("prompts", ScriptedPrompts())
    tools = kw.pop("tools", (WEB_SEARCH,))
    return make_ctx(tools, services=services, **kw)


async def _search(ctx: ToolUseContext, call_id: str = "s1", **inp: Any) -> CallOutcome:
    inp.setdefault("query", "nerve coding agent")
    return await run_tool_call(ToolCall(call_id, "WebSearch", inp), ctx)


def _results_turn(query: str = "nerve coding agent", **kw: Any) -> Turn:
    return Turn(
        [
            server_tool_use("web_search", {"query": query}, id="srv1"),
            web_search_result(
                "srv1",
                [
                    ("Nerve on PyPI", "https://pypi.org/p/nerve"),
                    ("Nerve docs", "https://nerve.dev/"),
                ],
            ),
            text("Nerve is a terminal coding agent."),
        ],
        **kw,
    )


async def test_results_come_back_with_their_urls() -> None:
    with ScriptedServer(Scenario.of(_results_turn())) as api:
        out = await _search(_ctx(api), allowed_domains=["pypi.org", "nerve.dev"])
    assert not out.is_error, out.tool_result
    content = out.tool_result["content"]
    assert content.startswith('Web search results for query: "nerve coding agent"')
    links = json.loads(content.split("Links: ", 1)[1].split("\n", 1)[0])
    assert links == [
        {"title": "Nerve on PyPI", "url": "https://pypi.org/p/nerve"},
        {"title": "Nerve docs", "url": "https://nerve.dev/"},
    ]
    assert "Nerve is a terminal coding agent." in content and "REMINDER" in content
    assert isinstance(out.output, WebSearchOutput) and out.output.searches == ["nerve coding agent"]
    body = api.requests[0].body
    assert body["model"] == MAIN
    assert body["tools"] == [
        {
            "type": SERVER_TOOL_TYPE,
            "name": "web_search",
            "max_uses": 8,
            "allowed_domains": ["pypi.org", "nerve.dev"],
        }
    ]
    assert "nerve coding agent" in json.dumps(body["messages"])
    api.assert_done()


async def test_endpoint_that_rejects_the_server_tool_gets_a_clear_message() -> None:
    fault = http_error(400, "invalid_request_error", "tools.0: unknown tool type")
    with ScriptedServer(Scenario([Turn([text("never")], faults=[fault])])) as api:
        out = await _search(_ctx(api))
    assert out.is_error
    content = out.tool_result["content"]
    assert content.startswith("Web search is not available: the API endpoint rejected")
    assert "400 invalid_request_error" in content and "unknown tool type" in content


async def test_endpoint_that_ignores_the_server_tool_gets_a_clear_message() -> None:
    with ScriptedServer(Scenario.of([text("I cannot browse the web.")])) as api:
        out = await _search(_ctx(api))
    assert out.is_error
    assert "answered without running a web search" in out.tool_result["content"]
    api.assert_done()


async def test_a_failed_search_names_the_error_code() -> None:
    turn = Turn(
        [
            server_tool_use("web_search", {"query": "q"}, id="srv1"),
            web_search_error("srv1", "max_uses_exceeded"),
            text("Sorry."),
        ]
    )
    with ScriptedServer(Scenario.of(turn)) as api:
        out = await _search(_ctx(api))
    assert out.is_error and "max_uses_exceeded" in out.tool_result["content"]


async def test_a_paused_search_is_resumed() -> None:
    paused = Turn(
        [server_tool_use("web_search", {"query": "first"}, id="srv1")], stop_reason="pause_turn"
    )

    def resumed(body: Any) -> bool:
        last = body["messages"][-1]
        return last["role"] == "assistant" and last["content"][0]["type"] == "server_tool_use"

    done = _results_turn(match=Match(predicate=resumed, description="the paused turn sent back"))
    with ScriptedServer(Scenario.of(paused, done)) as api:
        out = await _search(_ctx(api))
    assert not out.is_error, out.tool_result
    assert out.output.searches == ["first", "nerve coding agent"]
    assert len(out.output.results) == 2
    api.assert_done()


async def test_both_domain_lists_at_once_are_refused() -> None:
    out = await _search(_ctx(None), allowed_domains=["a.com"], blocked_domains=["b.com"])
    assert out.is_error and "not both" in out.tool_result["content"]


# -- permissions and hooks -----------------------------------------------------------------


async def test_it_asks_without_a_rule_though_it_is_read_only() -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    out = await _search(_ctx(None, rule_set=(), prompts=prompts))
    assert out.is_error and len(prompts.prompts) == 1
    assert prompts.prompts[0].verdict.suggestions == (RuleValue("WebSearch"),)


async def test_plan_mode_asks_rather_than_refuses() -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    with ScriptedServer(Scenario.of(_results_turn())) as api:
        out = await _search(_ctx(api, rule_set=(), prompts=prompts, mode=PermissionMode.PLAN))
    assert not out.is_error and len(prompts.prompts) == 1


async def test_a_bare_deny_rule_removes_it_from_the_pool() -> None:
    ctx = _ctx(None, rule_set=rules(("WebSearch", "deny")))
    assert assemble_tool_pool([WEB_SEARCH], [], ctx.permissions) == []


async def test_pre_tool_hook_can_deny(tmp_path: Path) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "searching is off today",
        }
    }
    cmd = hook_script(tmp_path, "pre.sh", json.dumps(deny))
    config = {
        "PreToolUse": [{"matcher": "WebSearch", "hooks": [{"type": "command", "command": cmd}]}]
    }
    with ScriptedServer(Scenario.of()) as api:
        out = await _search(_ctx(api, hooks=hook_runner(tmp_path, config)))
    assert out.is_error and "searching is off today" in out.tool_result["content"]
    api.assert_done()  # no request was made


async def test_many_results_are_persisted_past_the_budget(tmp_path: Path) -> None:
    many = [(f"Result {i} " + "x" * 200, f"https://example.com/{i}") for i in range(300)]
    turn = Turn(
        [server_tool_use("web_search", {"query": "q"}, id="srv1"), web_search_result("srv1", many)]
    )
    with ScriptedServer(Scenario.of(turn)) as api:
        out = await _search(_ctx(api, session_dir=tmp_path))
    assert out.tool_result["content"].startswith("<persisted-output>")
    assert "https://example.com/299" in out.persisted_path.read_text(encoding="utf-8")


class _NoInput(BaseModel):
    pass


def _mark(c: ToolUseContext) -> ToolUseContext:
    # A mark in a field WebSearch never reads.
    return replace(c, options=replace(c.options, model="marked"))


async def test_runs_in_a_parallel_batch_whose_modifiers_wait_for_the_batch() -> None:
    """The search's request waits (a server gate) until another read of the same batch opens
    it: possible only if both run at once. That read's modifier applies after the batch."""
    seen: list[Any] = []
    turn = _results_turn()
    turn.holds = {0: "go"}  # after the server_tool_use block, wait for the gate
    with ScriptedServer(Scenario.of(turn)) as api:

        async def opener(_inp: Any, ctx: ToolUseContext, _p: Any) -> ToolResult:
            seen.append(ctx.options.model or None)
            while not api.requests:  # the search's request has reached the server
                await asyncio.sleep(0.01)
            api.gate("go").set()
            return ToolResult("opened", context_modifier=_mark)

        peer = build_tool(
            name="Opener",
            input_model=_NoInput,
            call=opener,
            is_read_only=True,
            is_concurrency_safe=True,
        )
        ex = StreamingToolExecutor(_ctx(api, tools=(WEB_SEARCH, peer)))
        ex.add(ToolCall("s1", "WebSearch", {"query": "nerve coding agent"}))
        ex.add(ToolCall("o1", "Opener", {}))
        outcomes = await asyncio.wait_for(ex.finish(), 30)
    assert [o.tool_use_id for o in outcomes] == ["s1", "o1"]
    assert not outcomes[0].is_error, outcomes[0].tool_result
    assert any("gate go opened" in m for m in api.marks), api.marks
    assert seen == [None] and ex.current_context.options.model == "marked"
    api.assert_done()
