"""/context's numbers: each part of the window counted apart, and the bar drawn from them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agent_cli.loop.context_policy import ContextPolicy
from agent_cli.loop.context_usage import MEMORY_MARKER, context_usage, split_memory
from agent_cli.slash.context_view import context_bar, context_text
from tools.base import build_tool
from tools.result import ToolResult


class _In(BaseModel):
    text: str


async def _call(_inp: _In, _ctx: Any, _progress: Any) -> ToolResult:
    return ToolResult(data="")


def _tool(name: str, **kw: Any) -> Any:
    return build_tool(name=name, input_model=_In, call=_call, description="d" * 400, **kw)


def test_parts_are_counted_apart() -> None:
    system = "You are Nerve. " * 100 + f"\n\n{MEMORY_MARKER}\n" + "memory " * 200
    system += "\n\nSub-agent types for the Agent tool:\n- Explore: x"
    rest, memory = split_memory(system)
    assert memory.startswith(MEMORY_MARKER) and "Sub-agent types" in rest
    tools = [
        _tool("Read"),
        _tool("mcp__gh__issue", is_mcp=True),
        _tool("mcp__gh__pr", is_mcp=True, should_defer=True),
    ]
    messages = [
        {"role": "user", "content": "q" * 4000},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"text": "x"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r" * 8000}],
        },
    ]
    usage = context_usage(
        model="claude-sonnet-4-5",
        policy=ContextPolicy(),
        system_prompt=system,
        tools=tools,
        loaded_deferred=frozenset(),
        messages=messages,
        total=5000,
        measured=False,
    )
    parts = dict(usage.parts)
    assert parts["Memory files"] >= 350 and parts["System prompt"] >= 375
    assert parts["Built-in tools"] > 0 and parts["MCP tools"] > parts["Deferred tools"] > 0
    assert 1000 <= parts["Messages"] < 1100 and 2000 <= parts["Tool results"] < 2100
    assert usage.window == 200_000 and usage.threshold == 160_000 and usage.buffer == 40_000
    assert usage.free == 200_000 - max(usage.used, 5000) - 40_000
    bar = context_bar(usage)
    assert len(bar) == 52 and bar.endswith("B" * 10 + "]") and "S" in bar and "R" in bar
    text = context_text(usage)
    assert "Memory files" in text and "Compaction buffer" in text and "estimate" in text
