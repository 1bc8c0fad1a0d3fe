"""What a tool returns: typed data, optional extra messages, optional context modifier."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from tools.messages import Message
from tools.records import datarecord

if TYPE_CHECKING:
    from tools.context import ToolUseContext

__all__ = ["ContextModifier", "ToolResult", "ValidationError"]

ContextModifier = Callable[["ToolUseContext"], "ToolUseContext"]


@datarecord(slots=True)
class ToolResult:
    """The result of ``Tool.call``.

    ``data`` is the tool's typed output; the tool's ``to_content`` turns it into the
    ``tool_result`` content (a string or a list of ``tools.messages.ResultBlock``).
    ``new_messages`` are appended to the conversation after the result (sub-agent transcripts,
    system reminders).
    ``context_modifier`` is the only way a tool changes what later tools see.
    """

    data: Any
    new_messages: list[Message] = field(default_factory=list)
    context_modifier: ContextModifier | None = None
    is_error: bool = False


@datarecord(frozen=True, slots=True)
class ValidationError:
    """A semantic validation failure, reported to the model as an ``is_error`` tool_result."""

    message: str
    code: str = "invalid_input"
