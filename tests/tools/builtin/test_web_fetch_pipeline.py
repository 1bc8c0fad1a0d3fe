"""WebFetch through the whole pipeline: domain rules, the prompt and its "allow this domain",
hooks, the result budget, and the session-rule modifier inside a parallel batch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Scenario, ScriptedServer, text
from permissions.types import PermissionMode, RuleValue
from tests.tools.builtin.web_support import PageServer, side_model_for
from tests.tools.pipeline_helpers import (
    ScriptedPrompts,
    hook_runner,
    hook_script,
    make_ctx,
    rules,
    simple_tool,
)
from tools.builtin._web_cache import PageCache
from tools.builtin.web_fetch import WEB_FETCH
from tools.context import PermissionAnswer, PermissionResponse, ToolServices, ToolUseContext
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call

DOMAIN_RULE = RuleValue("WebFetch", "domain:127.0.0.1")


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with PageServer() as server:
        yield server


def _ctx(api: ScriptedServer | None, prompts: ScriptedPrompts, **kw: Any) -> ToolUseContext:
    services = ToolServices(side_model=side_model_for(api) if api is not None else None)
    tools = (WEB_FETCH, simple_tool("Plain"))
    kw.setdefault("rule_set", rules(("Plain", "allow")))
    ctx = make_ctx(tools, prompts=prompts, services=services, **kw)
    ctx.state.conversation.web_cache = PageCache()
    return ctx


def _call(url: str, call_id: str = "w1") -> ToolCall:
    return ToolCall(call_id, "WebFetch", {"url": url, "prompt": "summarise"})


async def test_without_a_rule_it_asks_showing_the_domain(pages: PageServer) -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW_ALWAYS)])
    with ScriptedServer(Scenario.of([text("a summary")])) as api:
        out = await run_tool_call(_call(pages.url("/page")), _ctx(api, prompts))
    assert not out.is_error, out.tool_result
    (prompt,) = prompts.prompts
    assert prompt.verdict.suggestions == (DOMAIN_RULE,)
    assert prompt.title == f"WebFetch({pages.url('/page')})"
    assert "fetching" in prompt.verdict.reason
    # "Don't ask again" remembers the domain: saved by the caller, a session rule meanwhile.
    assert out.rules_to_persist == (DOMAIN_RULE,)
    assert out.context_modifier is not None
    later = out.context_modifier(_ctx(None, ScriptedPrompts()))
    assert any(r.value == DOMAIN_RULE for r in later.permissions.rules)
    api.assert_done()


async def test_deny_rule_for_the_domain_stops_it_before_any_request(pages: PageServer) -> None:
    ctx = _ctx(None, ScriptedPrompts(), rule_set=rules(("WebFetch(domain:127.0.0.1)", "deny")))
    out = await run_tool_call(_call(pages.url("/page")), ctx)
    assert out.is_error
    assert "deny rule WebFetch(domain:127.0.0.1)" in out.tool_result["content"]
    assert pages.hits["/page"] == 0


async def test_ask_rule_asks_even_in_bypass_mode(pages: PageServer) -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    ctx = _ctx(
        None,
        prompts,
        mode=PermissionMode.BYPASS,
        rule_set=rules(("WebFetch(domain:*.0.0.1)", "ask"), ("WebFetch", "allow")),
    )
    out = await run_tool_call(_call(pages.url("/page")), ctx)
    assert out.is_error and len(prompts.prompts) == 1
    assert pages.hits["/page"] == 0


async def test_another_domain_is_not_covered_by_the_rule(pages: PageServer) -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    ctx = _ctx(None, prompts, rule_set=rules(("WebFetch(domain:127.0.0.1)", "allow")))
    out = await run_tool_call(_call(pages.url("/page", host="localhost")), ctx)
    assert out.is_error and prompts.prompts[0].verdict.suggestions == (
        RuleValue("WebFetch", "domain:localhost"),
    )


async def test_hooks_see_and_can_stop_the_fetch(tmp_path: Path, pages: PageServer) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no web from hooks",
        }
    }
    pre = hook_script(tmp_path, "pre.sh", json.dumps(deny))
    config = {
        "PreToolUse": [{"matcher": "WebFetch", "hooks": [{"type": "command", "command": pre}]}]
    }
    ctx = _ctx(None, ScriptedPrompts(), hooks=hook_runner(tmp_path, config))
    out = await run_tool_call(_call(pages.url("/page")), ctx)
    assert out.is_error and "no web from hooks" in out.tool_result["content"]
    assert pages.hits["/page"] == 0


async def test_post_tool_hook_adds_context(tmp_path: Path, pages: PageServer) -> None:
    answer = {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "checked"}
    }
    post = hook_script(tmp_path, "post.sh", json.dumps(answer))
    config = {
        "PostToolUse": [{"matcher": "WebFetch", "hooks": [{"type": "command", "command": post}]}]
    }
    with ScriptedServer(Scenario.of([text("fine")])) as api:
        ctx = _ctx(
            api,
            ScriptedPrompts(),
            hooks=hook_runner(tmp_path, config),
            rule_set=rules(("WebFetch(domain:127.0.0.1)", "allow")),
        )
        out = await run_tool_call(_call(pages.url("/page")), ctx)
    assert not out.is_error and out.tool_result["content"] == "fine"
    assert "checked" in json.dumps(out.new_messages)


async def test_an_oversized_answer_is_persisted(tmp_path: Path, pages: PageServer) -> None:
    huge = "word " * 12_000  # 60,000 chars: over the 50,000 a result may take inline
    with ScriptedServer(Scenario.of([text(huge)])) as api:
        ctx = _ctx(
            api,
            ScriptedPrompts(),
            session_dir=tmp_path,
            rule_set=rules(("WebFetch(domain:127.0.0.1)", "allow")),
        )
        out = await run_tool_call(_call(pages.url("/page")), ctx)
    content = out.tool_result["content"]
    assert content.startswith("<persisted-output>") and out.persisted_path is not None
    assert out.persisted_path.read_text(encoding="utf-8").strip() == huge.strip()


async def test_allow_this_domain_inside_a_parallel_batch(pages: PageServer) -> None:
    """Both fetches of the batch ask (the session rule is queued until the batch ends); the
    fetch after the barrier runs on the rule without asking."""
    prompts = ScriptedPrompts(
        [
            PermissionResponse(PermissionAnswer.ALLOW_ALWAYS),
            PermissionResponse(PermissionAnswer.ALLOW),
        ]
    )
    scenario = Scenario.of([text("ok")], [text("ok")], [text("ok")])
    with ScriptedServer(scenario) as api:
        ctx = _ctx(api, prompts)
        ex = StreamingToolExecutor(ctx)
        ex.add(_call(pages.url("/page"), "a"))
        ex.add(_call(pages.url("/notes.txt"), "b"))
        ex.add(ToolCall("s", "Plain", {"text": "barrier"}))
        ex.add(_call(pages.url("/data.json"), "c"))
        outcomes: list[CallOutcome] = await ex.finish()
    assert [o.tool_use_id for o in outcomes] == ["a", "b", "s", "c"]
    assert not any(o.is_error for o in outcomes), [o.tool_result for o in outcomes]
    assert len(prompts.prompts) == 2  # a and b; c ran on the session rule
    assert {p.tool_use_id for p in prompts.prompts} == {"a", "b"}
    assert any(r.value == DOMAIN_RULE for r in ex.current_context.permissions.rules)
    api.assert_done()
