"""ToolSearch: select and keyword search over deferred tools; loading through the executor."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from tests.tools.pipeline_helpers import make_ctx, read_only_tool
from tools.builtin.tool_search import TOOL_SEARCH, TOOLS, search_tools
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import ToolCall
from tools.registry import tools_for_api


class QueryIn(BaseModel):
    sql: str


def deferred_tools() -> list[Any]:
    return [
        read_only_tool(
            "mcp__db__run_query",
            input_model=QueryIn,
            should_defer=True,
            is_mcp=True,
            description="Run a SQL query against the warehouse",
        ),
        read_only_tool(
            "mcp__slack__send_message",
            should_defer=True,
            is_mcp=True,
            description="Post a message to a channel",
            search_hint="chat notify",
        ),
        read_only_tool(
            "mcp__slack__list_channels",
            should_defer=True,
            is_mcp=True,
            description="List channels",
        ),
        read_only_tool("Glob", description="Find files by pattern (not deferred)"),
    ]


def test_module_exports_and_traits() -> None:
    assert TOOLS == (TOOL_SEARCH,)
    inp = TOOL_SEARCH.input_model.model_validate({"query": "x"})
    assert inp.max_results == 5
    assert TOOL_SEARCH.is_read_only(inp) and TOOL_SEARCH.is_concurrency_safe(inp)


def test_select_by_exact_names_reports_missing() -> None:
    tools = deferred_tools()
    found, missing = search_tools(tools, "select:mcp__slack__send_message, nope, Glob", 5)
    assert [t.name for t in found] == ["mcp__slack__send_message", "Glob"]
    assert missing == ["nope"]


def test_keyword_search_scores_name_hint_and_description() -> None:
    tools = deferred_tools()
    found, _ = search_tools(tools, "slack", 5)
    assert [t.name for t in found] == ["mcp__slack__list_channels", "mcp__slack__send_message"]
    found, _ = search_tools(tools, "notify", 5)  # search hint only
    assert [t.name for t in found] == ["mcp__slack__send_message"]
    found, _ = search_tools(tools, "sql warehouse", 5)
    assert [t.name for t in found] == ["mcp__db__run_query"]
    found, _ = search_tools(tools, "files pattern", 5)  # Glob is not deferred
    assert found == []
    found, _ = search_tools(tools, "message channel", 1)
    assert [t.name for t in found] == ["mcp__slack__send_message"]


async def test_result_carries_schemas_and_modifier_loads_them() -> None:
    tools = [TOOL_SEARCH, *deferred_tools()]
    ctx = make_ctx(tools)
    outcome = await run_tool_call(
        ToolCall("t1", "ToolSearch", {"query": "select:mcp__db__run_query"}), ctx
    )
    assert not outcome.is_error
    text = outcome.tool_result["content"]
    assert text.startswith("Loaded 1 tool(s): mcp__db__run_query.")
    schema = json.loads(text.split("<function>")[1].split("</function>")[0])
    assert schema["input_schema"]["required"] == ["sql"]
    assert outcome.context_modifier is not None
    after = outcome.context_modifier(ctx)
    assert after.options.loaded_deferred == frozenset({"mcp__db__run_query"})
    specs = tools_for_api(after.options.tools, after.options.loaded_deferred)
    db = next(s for s in specs if s["name"] == "mcp__db__run_query")
    assert "defer_loading" not in db and db["input_schema"]["required"] == ["sql"]


async def test_no_match_lists_what_is_deferred() -> None:
    ctx = make_ctx([TOOL_SEARCH, *deferred_tools()])
    outcome = await run_tool_call(ToolCall("t1", "ToolSearch", {"query": "kubernetes"}), ctx)
    text = outcome.tool_result["content"]
    assert text.startswith('No matching deferred tools found for "kubernetes".')
    assert "mcp__slack__send_message" in text
    assert outcome.context_modifier is None


async def test_loaded_through_the_executor_for_later_calls() -> None:
    ctx = make_ctx([TOOL_SEARCH, *deferred_tools()])
    ex = StreamingToolExecutor(ctx)
    ex.add(ToolCall("t1", "ToolSearch", {"query": "slack"}))
    await ex.finish()
    assert ex.current_context.options.loaded_deferred == frozenset(
        {"mcp__slack__list_channels", "mcp__slack__send_message"}
    )
