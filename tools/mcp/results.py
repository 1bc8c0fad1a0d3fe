"""MCP ``CallToolResult`` → tool_result content, and the MCP output cap.

Text stays text; images become Anthropic image blocks; embedded text resources become text;
structured content is sent as JSON when the server gave no text. Results with only text are
joined into one string (what most tools return); with an image they stay a list of blocks.

The cap (``MAX_MCP_OUTPUT_TOKENS``, default 25,000 tokens, estimated as chars / 4) cuts the text
and appends Claude Code's ``[OUTPUT TRUNCATED - exceeded N token limit]`` and a note. Before the
cut reaches the model, ``persist_full`` writes the whole text to the tool-results dir and puts
a preview and the path in its place, so nothing is lost.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tools.messages import ResultBlock, text_block
from tools.pipeline.budget import persist_result
from tools.records import datarecord

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "IMAGE_MEDIA_TYPES",
    "McpContent",
    "cap_output",
    "convert_result",
    "max_output_tokens",
    "persist_full",
    "truncation_suffix",
]

DEFAULT_MAX_OUTPUT_TOKENS = 25_000
CHARS_PER_TOKEN = 4
IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@datarecord(frozen=True)
class McpContent:
    """Converted content and whether the server flagged it as an error."""

    content: str | list[ResultBlock]
    is_error: bool = False
    truncated: bool = False


def max_output_tokens(environ: Mapping[str, str]) -> int:
    """``MAX_MCP_OUTPUT_TOKENS`` (a positive integer), else the default."""
    raw = environ.get("MAX_MCP_OUTPUT_TOKENS", "").strip()
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_MAX_OUTPUT_TOKENS
    return value if value > 0 else DEFAULT_MAX_OUTPUT_TOKENS


def truncation_suffix(token_limit: int) -> str:
    return (
        f"\n\n[OUTPUT TRUNCATED - exceeded {token_limit} token limit]\n"
        "The tool output was too large and was cut. If this MCP server offers pagination, "
        "filtering or a narrower query, use it to fetch a smaller portion of the data."
    )


def _field(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def _text(block: ResultBlock) -> str:
    """A text block's text; "" for an image."""
    return block["text"] if block["type"] == "text" else ""


def _image(data: str, mime: str | None) -> ResultBlock | None:
    if mime not in IMAGE_MEDIA_TYPES or not data:
        return None
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def _resource_blocks(resource: Any) -> list[ResultBlock]:
    uri = str(_field(resource, "uri", ""))
    mime = _field(resource, "mime_type")
    text = _field(resource, "text")
    if isinstance(text, str):
        return [{"type": "text", "text": text}]
    blob = _field(resource, "blob")
    if isinstance(blob, str):
        image = _image(blob, mime)
        if image is not None:
            return [image]
        size = len(blob) * 3 // 4
        return [
            {
                "type": "text",
                "text": f"[Binary resource {uri} ({mime or 'unknown type'}), "
                f"{size} bytes, not shown]",
            }
        ]
    return []


def _blocks(item: Any) -> list[ResultBlock]:
    kind = _field(item, "type")
    if kind == "text":
        return [{"type": "text", "text": str(_field(item, "text", ""))}]
    if kind == "image":
        mime = _field(item, "mime_type") or _field(item, "mimeType")
        block = _image(str(_field(item, "data", "")), mime)
        if block is not None:
            return [block]
        return [{"type": "text", "text": f"[Image of unsupported type {mime}, not shown]"}]
    if kind == "audio":
        mime = _field(item, "mime_type") or "audio"
        return [{"type": "text", "text": f"[Audio content ({mime}), not shown]"}]
    if kind == "resource":
        return _resource_blocks(_field(item, "resource"))
    if kind == "resource_link":
        name = _field(item, "name", "")
        uri = _field(item, "uri", "")
        description = _field(item, "description")
        text = f"[Resource link: {name} <{uri}>]" + (f" {description}" if description else "")
        return [{"type": "text", "text": text}]
    return [{"type": "text", "text": f"[Unsupported MCP content of type {kind!r}]"}]


def cap_output(
    blocks: list[ResultBlock], max_chars: int, token_limit: int
) -> tuple[list[ResultBlock], bool]:
    """Cut text blocks to ``max_chars`` in total; images pass. Returns (blocks, truncated)."""
    total = sum(len(b["text"]) for b in blocks if b["type"] == "text")
    if total <= max_chars:
        return blocks, False
    budget = max_chars
    out: list[ResultBlock] = []
    for block in blocks:
        if block["type"] != "text":
            out.append(block)
            continue
        if budget <= 0:
            continue
        text = block["text"]
        out.append({"type": "text", "text": text[:budget]})
        budget -= min(len(text), budget)
    last_text = max(i for i, b in enumerate(out) if b["type"] == "text")
    out[last_text] = text_block(_text(out[last_text]) + truncation_suffix(token_limit))
    return out, True


def convert_result(result: Any, *, token_limit: int, max_chars: int | None = None) -> McpContent:
    """A ``CallToolResult`` (model or dict) as tool_result content, capped.

    ``max_chars`` defaults to ``token_limit * 4``; a tool that declared a larger result limit
    passes that instead.
    """
    blocks: list[ResultBlock] = []
    for item in _field(result, "content", None) or []:
        blocks.extend(_blocks(item))
    has_text = any(_text(b) for b in blocks)
    structured = _field(result, "structured_content")
    if structured is None and isinstance(result, Mapping):
        structured = result.get("structuredContent")
    if not has_text and structured is not None:
        blocks.append(
            {"type": "text", "text": json.dumps(structured, ensure_ascii=False, default=str)}
        )
    limit = max(token_limit * CHARS_PER_TOKEN, max_chars or 0)
    blocks, truncated = cap_output(blocks, limit, token_limit)
    is_error = bool(_field(result, "is_error", False) or _field(result, "isError", False))
    if all(b["type"] == "text" for b in blocks):
        content: str | list[ResultBlock] = "\n\n".join(_text(b) for b in blocks if _text(b))
    else:
        content = blocks
    return McpContent(content, is_error=is_error, truncated=truncated)


def persist_full(
    result: Any, capped: str | list[ResultBlock], session_dir: Path | None, token_limit: int
) -> str | list[ResultBlock]:
    """The whole text of ``result`` saved to a file; the capped content when it cannot be."""
    blocks: list[ResultBlock] = []
    for item in _field(result, "content", None) or []:
        blocks.extend(_blocks(item))
    text = "\n\n".join(_text(b) for b in blocks if _text(b))
    try:
        saved = persist_result(text, f"mcp-{uuid.uuid4().hex}", session_dir)
    except OSError:
        return capped  # cut but still useful: better than losing the call
    note = (
        f"{saved.wrapper}\n[OUTPUT TRUNCATED - exceeded {token_limit} token limit] The whole "
        "output is in the file above: Read it in parts (offset/limit) or Grep it."
    )
    media = [b for b in blocks if b["type"] != "text"]
    if not media:
        return note
    return [*media, {"type": "text", "text": note}]
