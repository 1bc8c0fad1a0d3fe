"""MCP tools of a real stdio server through the real pipeline, registry and ToolSearch."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from permissions.types import PermissionContext, PermissionMode
from tests.tools.mcp.conftest import make_manager, stdio, text_of
from tests.tools.pipeline_helpers import hook_runner, make_ctx, rules
from tools.base import Tool
from tools.context import ToolUseContext
from tools.mcp import McpManager
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call
from tools.registry import assemble_tool_pool, get_all_base_tools, tools_for_api

# One demo server for the module (spawning one costs ~0.5 s); tests only read from it.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def demo(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpManager]:
    manager = make_manager(tmp_path_factory.mktemp("mcp"), stdio("demo", args=["demo-module"]))
    assert await manager.start() == []
    yield manager
    await manager.close()


def pool_of(manager: McpManager, perm: PermissionContext | None = None) -> list[Tool[Any]]:
    return assemble_tool_pool(get_all_base_tools(), manager.tools(), perm or PermissionContext())


def bypass_ctx(manager: McpManager, tmp_path: Path, **kw: Any) -> ToolUseContext:
    return make_ctx(
        pool_of(manager), mode=PermissionMode.BYPASS, cwd=tmp_path, session_dir=tmp_path, **kw
    )


async def run(ctx: ToolUseContext, name: str, args: dict[str, Any], id: str = "t1") -> CallOutcome:
    return await run_tool_call(ToolCall(id=id, name=name, input=args), ctx)


def content(out: CallOutcome) -> Any:
    return out.tool_result["content"]


def by_name(manager: McpManager) -> dict[str, Tool[Any]]:
    return {t.name: t for t in manager.tools()}


async def test_tools_listed_with_names_schemas_and_traits(demo: McpManager) -> None:
    tools = {n: t for n, t in by_name(demo).items() if t.is_mcp}
    assert {"mcp__demo__add", "mcp__demo__echo", "mcp__demo__delete_all"} <= set(tools)
    add = tools["mcp__demo__add"]
    assert add.is_mcp and add.should_defer
    assert add.description == "Add two integers."
    schema = add.input_schema()
    assert schema["type"] == "object" and schema["required"] == ["a", "b"]
    assert schema["properties"]["a"]["type"] == "integer"
    parsed = add.input_model.model_validate({"a": 1, "b": 2})
    assert add.is_read_only(parsed) and add.is_concurrency_safe(parsed)
    assert not add.is_destructive(parsed)
    echo = tools["mcp__demo__echo"]
    e = echo.input_model.model_validate({"text": "x"})
    assert not echo.is_read_only(e) and not echo.is_concurrency_safe(e)
    assert echo.is_destructive(e)  # the MCP default when the server gives no hint
    delete = tools["mcp__demo__delete_all"]
    assert delete.is_destructive(delete.input_model.model_validate({}))
    assert tools["mcp__demo__wide"].max_result_size_chars == 200_000
    assert tools["mcp__demo__big"].max_result_size_chars == 100_000
    view = demo.servers()[0]
    assert view.status == "connected" and view.tools == len(tools) and view.startup_s


async def test_call_through_pipeline_with_allow_rule(demo: McpManager, tmp_path: Path) -> None:
    perm_rules = rules(("mcp__demo__add", "allow"))
    ctx = make_ctx(pool_of(demo), rule_set=perm_rules, cwd=tmp_path, session_dir=tmp_path)
    out = await run(ctx, "mcp__demo__add", {"a": 2, "b": 3})
    assert not out.is_error and content(out) == "5"
    # echo has no allow rule: default mode asks, the headless UI denies.
    out = await run(ctx, "mcp__demo__echo", {"text": "hi"})
    assert out.is_error and "permission" in text_of(content(out)).lower()


async def test_read_only_hint_does_not_auto_allow(demo: McpManager, tmp_path: Path) -> None:
    ctx = make_ctx(pool_of(demo), cwd=tmp_path, session_dir=tmp_path)
    out = await run(ctx, "mcp__demo__add", {"a": 2, "b": 3})
    assert out.is_error and "5" != content(out)


async def test_server_level_rules(demo: McpManager, tmp_path: Path) -> None:
    deny = PermissionContext(rules=rules(("mcp__demo", "deny")), cwd=tmp_path)
    pool = pool_of(demo, deny)
    assert not any(t.is_mcp for t in pool) and any(t.name == "Read" for t in pool)
    ctx = make_ctx(pool, rule_set=deny.rules, cwd=tmp_path)
    out = await run(ctx, "mcp__demo__add", {"a": 1, "b": 1})
    assert out.is_error and "No such tool" in text_of(content(out))
    allow_all = rules(("mcp__demo__*", "allow"))
    ctx = make_ctx(pool_of(demo), rule_set=allow_all, cwd=tmp_path, session_dir=tmp_path)
    out = await run(ctx, "mcp__demo__echo", {"text": "hello"})
    assert not out.is_error and content(out) == "hello"


async def test_deferred_hint_then_toolsearch_loads_schema(demo: McpManager, tmp_path: Path) -> None:
    ctx = bypass_ctx(demo, tmp_path)
    # Without the schema the model guesses: numbers sent as strings.
    out = await run(ctx, "mcp__demo__add", {"a": "2", "b": "3"})
    text = text_of(content(out))
    assert out.is_error and "InputValidationError: mcp__demo__add failed" in text
    assert "'2' is not of type 'integer'" in text
    assert 'call ToolSearch with query "select:mcp__demo__add" first' in text
    specs = {s["name"]: s for s in tools_for_api(ctx.options.tools, ctx.options.loaded_deferred)}
    assert specs["mcp__demo__add"].get("defer_loading") is True
    assert specs["mcp__demo__add"]["input_schema"] == {"type": "object", "properties": {}}

    found = await run(ctx, "ToolSearch", {"query": "select:mcp__demo__add"})
    assert not found.is_error and "mcp__demo__add" in text_of(content(found))
    assert found.context_modifier is not None
    ctx = found.context_modifier(ctx)
    assert "mcp__demo__add" in ctx.options.loaded_deferred
    specs = {s["name"]: s for s in tools_for_api(ctx.options.tools, ctx.options.loaded_deferred)}
    assert "defer_loading" not in specs["mcp__demo__add"]
    assert specs["mcp__demo__add"]["input_schema"]["required"] == ["a", "b"]
    out = await run(ctx, "mcp__demo__add", {"a": 40, "b": 2})
    assert content(out) == "42"
    # Loaded now: a bad call gets the schema error without the ToolSearch hint.
    out = await run(ctx, "mcp__demo__add", {"a": 1})
    assert out.is_error and "ToolSearch" not in text_of(content(out))
    assert "'b' is a required property" in text_of(content(out))


async def test_keyword_toolsearch_finds_mcp_tools(demo: McpManager, tmp_path: Path) -> None:
    ctx = bypass_ctx(demo, tmp_path)
    found = await run(ctx, "ToolSearch", {"query": "add integers"})
    assert "mcp__demo__add" in text_of(content(found)).split("<functions>")[0]


async def test_bad_args_concise_error_without_server_dump(demo: McpManager, tmp_path: Path) -> None:
    ctx = bypass_ctx(demo, tmp_path, loaded_deferred=frozenset({"mcp__demo__echo"}))
    out = await run(ctx, "mcp__demo__echo", {"text": 5, "extra": {"deep": "x" * 10_000}})
    text = text_of(content(out))
    assert out.is_error and "text: 5 is not of type 'string'" in text
    assert len(text) < 500 and "pydantic" not in text
    out = await run(ctx, "mcp__demo__echo", ["not", "an", "object"])  # type: ignore[arg-type]
    assert out.is_error and "input must be an object" in text_of(content(out))


async def test_server_error_image_and_structured(demo: McpManager, tmp_path: Path) -> None:
    ctx = bypass_ctx(demo, tmp_path)
    out = await run(ctx, "mcp__demo__fail", {"message": "the widget is broken"})
    assert out.is_error and "the widget is broken" in text_of(content(out))
    out = await run(ctx, "mcp__demo__image", {})
    assert isinstance(content(out), list) and content(out)[0]["type"] == "image"
    assert content(out)[0]["source"]["media_type"] == "image/png"
    out = await run(ctx, "mcp__demo__structured", {})
    assert json.loads(text_of(content(out))) == {"answer": 42, "unit": "widgets"}


async def test_post_tool_use_hook_replaces_mcp_output(demo: McpManager, tmp_path: Path) -> None:
    hook_out = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedMCPToolOutput": "[redacted]",
            }
        }
    )
    from tests.tools.pipeline_helpers import hook_script

    cmd = hook_script(tmp_path, "redact.sh", hook_out)
    hooks = hook_runner(
        tmp_path,
        {
            "PostToolUse": [
                {"matcher": "mcp__demo__.*", "hooks": [{"type": "command", "command": cmd}]}
            ]
        },
    )
    ctx = bypass_ctx(demo, tmp_path, hooks=hooks)
    out = await run(ctx, "mcp__demo__echo", {"text": "secret value"})
    assert not out.is_error and content(out) == "[redacted]"


async def test_huge_output_saved_whole_before_the_cap(tmp_path: Path, token: str) -> None:
    manager = make_manager(
        tmp_path, stdio("demo", args=[token]), environ={"MAX_MCP_OUTPUT_TOKENS": "100"}
    )
    assert await manager.start() == []
    try:
        ctx = bypass_ctx(manager, tmp_path)
        out = await run(ctx, "mcp__demo__big", {"n": 5_000})
        text = text_of(content(out))
        assert not out.is_error and text.startswith("<persisted-output>")
        assert "[OUTPUT TRUNCATED - exceeded 100 token limit]" in text
        saved = Path(text.split("Full output saved to: ")[1].split("\n")[0])
        assert saved.parent == tmp_path / "tool-results"
        assert saved.read_text() == "x" * 5_000  # nothing lost: the model can Read the rest
        # A tool that declares a larger result size keeps its output.
        out = await run(ctx, "mcp__demo__wide", {"n": 5_000})
        assert text_of(content(out)) == "y" * 5_000
    finally:
        await manager.close()


async def test_builtin_prefix_of_api_tools_unchanged_by_mcp(demo: McpManager) -> None:
    base = assemble_tool_pool(get_all_base_tools(), (), PermissionContext())
    with_mcp = pool_of(demo)
    before = json.dumps(tools_for_api(base), sort_keys=True)
    after_specs = tools_for_api(with_mcp)
    n = len(base)
    assert json.dumps(after_specs[:n], sort_keys=True) == before
    resource_tools = {"ListMcpResourcesTool", "ReadMcpResourceTool"}
    assert all(
        s["name"].startswith("mcp__") or s["name"] in resource_tools for s in after_specs[n:]
    )
    assert all("defer_loading" in s or "input_schema" not in s for s in after_specs[n:])
    assert [s["name"] for s in after_specs[n:]] == sorted(s["name"] for s in after_specs[n:])
