"""When the context is too full, and the cheap first remedy: clearing old tool results.

The threshold is a share of the model's window (``agent_cli.model.windows``): 80% unless
``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (1-100, from the session environment: settings ``env`` over
the shell's) says otherwise, and never so high that the answer would not fit (the window minus the output
reserve). ``autoCompact: false`` in settings (or Claude Code's ``autoCompactEnabled: false``)
turns the automatic remedies off; ``/compact`` still works.

Clearing replaces the content of every tool result but the newest few with a one-line stub that
names the tool; the results stay in the transcript. Cleared ids are entered in the
conversation budget's table of replacements, so that budget never puts a preview back.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from agent_cli.loop.context_meter import estimate_tokens
from agent_cli.model.config import DEFAULT_MAX_TOKENS
from agent_cli.model.windows import context_window
from tools.records import datarecord

if TYPE_CHECKING:
    from tools.messages import Message

__all__ = [
    "DEFAULT_PCT",
    "KEEP_TOOL_RESULTS",
    "PCT_ENV",
    "ContextPolicy",
    "clear_old_tool_results",
    "cleared_stub",
]

DEFAULT_PCT = 80.0
PCT_ENV = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
KEEP_TOOL_RESULTS = 5
# A result smaller than this is left alone: clearing it would save next to nothing.
_MIN_CLEAR_TOKENS = 50
_STUB_PREFIX = "[Old tool result content cleared"


def cleared_stub(tool_name: str) -> str:
    """What the model sees in place of an old result (names the tool; it may run it again)."""
    return f"{_STUB_PREFIX}: this {tool_name} output was removed to free context]"


@datarecord(frozen=True, slots=True)
class ContextPolicy:
    """Auto-compaction settings; the threshold depends on the model in use."""

    auto: bool = True
    pct: float = DEFAULT_PCT
    keep_tool_results: int = KEEP_TOOL_RESULTS
    output_reserve: int = DEFAULT_MAX_TOKENS
    env: Mapping[str, str] = field(default_factory=dict)

    def window(self, model: str) -> int:
        return context_window(model, self.env)

    def threshold(self, model: str) -> int:
        """Tokens above which the context is cut down before the next request."""
        window = self.window(model)
        wanted = int(window * self.pct / 100)
        # The answer needs room too, but a tiny window must still leave room to work in.
        ceiling = max(window - self.output_reserve, window // 2)
        return max(1, min(wanted, ceiling))

    @classmethod
    def from_settings(
        cls, extras: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> tuple[ContextPolicy, list[str]]:
        """The policy from settings keys and ``environ`` (the session environment, see
        ``agent_cli.session.environment``; None: this process's), with a warning per bad value."""
        warnings: list[str] = []
        env = dict(os.environ if environ is None else environ)
        auto = True
        for key in ("autoCompact", "autoCompactEnabled"):
            if key not in extras:
                continue
            value = extras[key]
            if isinstance(value, bool):
                auto = value
            else:
                warnings.append(
                    f"settings: {key}: expected true or false, got {value!r}; "
                    "automatic compaction stays on"
                )
        pct = DEFAULT_PCT
        raw = str(env.get(PCT_ENV, "")).strip()
        if raw:
            try:
                pct = float(raw)
            except ValueError:
                pct = -1.0
            if not 0 < pct <= 100:
                warnings.append(
                    f"{PCT_ENV}={raw!r} is not a percentage from 1 to 100; using {DEFAULT_PCT:g}"
                )
                pct = DEFAULT_PCT
        return cls(auto=auto, pct=pct, env=env), warnings


def _tool_names(messages: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    names: dict[str, str] = {}
    for msg in messages:
        content = msg.get("content")
        if msg.get("role") == "assistant" and isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    names[str(b.get("id"))] = str(b.get("name") or "tool")
    return names


def _result_blocks(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        b
        for msg in messages
        if msg.get("role") == "user" and isinstance(msg.get("content"), list)
        for b in msg["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def clear_old_tool_results(
    messages: Sequence[Message],
    keep: int,
    replaced: MutableMapping[str, str] | None = None,
) -> tuple[int, int]:
    """Clear all but the newest ``keep`` tool results in place; returns (count, tokens freed)."""
    names = _tool_names(messages)
    blocks = _result_blocks(messages)
    older = blocks[: max(0, len(blocks) - keep)]
    count = freed = 0
    for block in older:
        content = block.get("content")
        if isinstance(content, str) and content.startswith(_STUB_PREFIX):
            continue
        size = estimate_tokens(content)
        if size < _MIN_CLEAR_TOKENS:
            continue
        tool_use_id = str(block.get("tool_use_id"))
        stub = cleared_stub(names.get(tool_use_id, "tool"))
        block["content"] = stub
        if replaced is not None:
            replaced[tool_use_id] = stub
        count += 1
        freed += size - estimate_tokens(stub)
    return count, freed
