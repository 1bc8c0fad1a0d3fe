"""What fills the context window, by part: the numbers behind ``/context``.

Each part is estimated the way the compaction threshold is (``context_meter``): the system
prompt (its memory-file section counted apart), the tools sent in full (built-in and MCP apart)
and by name only (deferred), the messages, and the tool results inside them. ``total`` is the
figure compaction acts on: the API's own count after the last response when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_cli.loop.context_meter import estimate_tokens
from agent_cli.loop.context_policy import ContextPolicy
from tools.base import Tool
from tools.records import datarecord

__all__ = ["MEMORY_MARKER", "ContextUsage", "context_usage", "split_memory"]

# How the memory section of the system prompt starts (agent_cli.customize.memory.render_memory).
MEMORY_MARKER = "Instructions from memory files follow."
_AGENTS_MARKER = "\n\nSub-agent types for the Agent tool:"


@datarecord(frozen=True, slots=True)
class ContextUsage:
    """Tokens by part (label, tokens), and the window they share."""

    model: str
    window: int
    threshold: int
    auto: bool
    parts: tuple[tuple[str, int], ...]
    total: int
    measured: bool  # total counts from the API's figure for the last response

    @property
    def used(self) -> int:
        return sum(tokens for _, tokens in self.parts)

    @property
    def buffer(self) -> int:
        """Room kept free so compaction starts in time (0 when auto-compaction is off)."""
        return max(0, self.window - self.threshold) if self.auto else 0

    @property
    def free(self) -> int:
        return max(0, self.window - max(self.used, self.total) - self.buffer)


def split_memory(system_prompt: str) -> tuple[str, str]:
    """(the system prompt without its memory section, the memory section)."""
    start = system_prompt.find(MEMORY_MARKER)
    if start < 0:
        return system_prompt, ""
    end = system_prompt.find(_AGENTS_MARKER, start)
    end = len(system_prompt) if end < 0 else end
    return system_prompt[:start] + system_prompt[end:], system_prompt[start:end]


def _message_parts(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    results = other = 0
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, str):
            other += estimate_tokens(content)
            continue
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results += estimate_tokens(block)
            else:
                other += estimate_tokens(block)
    return other, results


def context_usage(
    *,
    model: str,
    policy: ContextPolicy,
    system_prompt: str,
    tools: Sequence[Tool[Any]],
    loaded_deferred: frozenset[str],
    messages: Sequence[Mapping[str, Any]],
    total: int,
    measured: bool,
) -> ContextUsage:
    """The breakdown of the next request's context (see the module docstring)."""
    system, memory = split_memory(system_prompt)
    builtin = mcp = deferred = 0
    for tool in tools:
        is_deferred = tool.should_defer and tool.name not in loaded_deferred
        size = estimate_tokens(tool.api_schema(deferred=is_deferred))
        if is_deferred:
            deferred += size
        elif tool.is_mcp:
            mcp += size
        else:
            builtin += size
    other, results = _message_parts(messages)
    parts = (
        ("System prompt", estimate_tokens(system)),
        ("Memory files", estimate_tokens(memory)),
        ("Built-in tools", builtin),
        ("MCP tools", mcp),
        ("Deferred tools", deferred),
        ("Messages", other),
        ("Tool results", results),
    )
    return ContextUsage(
        model=model,
        window=policy.window(model),
        threshold=policy.threshold(model),
        auto=policy.auto,
        parts=parts,
        total=total,
        measured=measured,
    )
