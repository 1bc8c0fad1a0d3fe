"""Plain-text views of a conversation: a tool call's one-line header, a tool result's text, and
the whole conversation as ``/export`` writes it. The app's widgets use the same two pieces, so
an export reads like the screen."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agent_cli.loop.messages import content_blocks

__all__ = ["EXPORT_RESULT_LINES", "content_text", "conversation_text", "tool_header"]

EXPORT_RESULT_LINES = 20  # a longer tool result is cut in an export, with a count
_HEADER_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description")


def tool_header(name: str, tool_input: Any) -> str:
    """``Bash(make test)``: the tool and its main argument (first line, 120 characters)."""
    if isinstance(tool_input, dict):
        for key in _HEADER_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                return f"{name}({value.splitlines()[0][:120]})"
        if tool_input:
            return f"{name}({json.dumps(tool_input, default=str)[:120]})"
    return name


def content_text(content: Any) -> str:
    """A tool_result content (string, blocks, anything) as plain text for display."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out: list[str] = []
        for block in content:
            if isinstance(block, dict):
                kind = block.get("type")
                if kind == "text":
                    out.append(str(block.get("text", "")))
                elif kind == "image":
                    out.append("[image]")
                elif kind == "document":
                    out.append("[document]")
                else:
                    out.append(json.dumps(block, default=str)[:200])
            else:
                out.append(str(block))
        return "\n".join(out)
    return str(content)


def _is_meta(message: dict[str, Any]) -> bool:
    if message.get("_ephemeral") or message.get("isMeta") or message.get("isCompactSummary"):
        return True
    texts = [
        b.get("text", "") for b in content_blocks(message.get("content")) if b.get("type") == "text"
    ]
    return bool(texts) and all(str(t).lstrip().startswith("<system-reminder>") for t in texts)


def _result_lines(block: dict[str, Any]) -> list[str]:
    lines = content_text(block.get("content")).splitlines() or ["(no output)"]
    shown = lines[:EXPORT_RESULT_LINES]
    if len(lines) > len(shown):
        shown.append(f"… +{len(lines) - len(shown)} lines")
    mark = "Error: " if block.get("is_error") else ""
    return [f"  ⎿  {mark}{shown[0]}", *(f"     {line}" for line in shown[1:])]


def conversation_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """The conversation as the user saw it: ``> prompt``, the model's text, ``● Tool(arg)``
    with the first lines of its result. Reminders meant only for the model are left out."""
    out: list[str] = []
    for message in messages:
        if not isinstance(message, dict) or _is_meta(message):
            continue
        user = message.get("role") == "user"
        for block in content_blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text" and str(block.get("text", "")).strip():
                text = str(block["text"]).strip()
                out += ["> " + text.replace("\n", "\n  ")] if user else [text]
                out.append("")
            elif kind == "tool_use":
                out.append("● " + tool_header(str(block.get("name", "?")), block.get("input")))
            elif kind == "tool_result":
                out += [*_result_lines(block), ""]
    return "\n".join(out).rstrip() + "\n"
