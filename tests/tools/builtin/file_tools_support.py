"""Helpers for the file-tool tests: a context rooted in a temp dir and a call that validates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from permissions.types import PermissionContext
from tools.base import Tool
from tools.context import ToolUseContext
from tools.result import ToolResult

__all__ = ["content_text", "make_ctx", "run_tool"]


def make_ctx(cwd: Path) -> ToolUseContext:
    """A headless context whose cwd is ``cwd``."""
    return ToolUseContext(permissions=PermissionContext(cwd=cwd))


async def run_tool(tool: Tool[Any], raw: dict[str, Any], ctx: ToolUseContext) -> ToolResult:
    """Parse, validate and call, as the pipeline does (steps 3, 4 and 10)."""
    inp = tool.input_model.model_validate(raw)
    error = await tool.validate_input(inp, ctx)
    if error is not None:
        return ToolResult(data=error.message, is_error=True)
    progress: list[Any] = []
    return await tool.call(inp, ctx, progress.append)


def content_text(tool: Tool[Any], result: ToolResult) -> str:
    """The text the model would see (text blocks joined)."""
    content = tool.to_content(result.data)
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")
