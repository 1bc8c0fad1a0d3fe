"""The shapes of the Anthropic Messages API that travel through Nerve, as ``TypedDict``s.

A conversation is a list of :class:`Message` (``{"role": ..., "content": ...}``); ``content`` is
a string or a list of :data:`ContentBlock`: ``text``, ``image``, ``document``, ``tool_use``,
``tool_result``, ``thinking``, ``redacted_thinking``, and the server tools' ``server_tool_use``
and ``web_search_tool_result``. A ``tool_result``'s own content is a string or a list of
:data:`ResultBlock` (text, image, document). The shapes are plain dicts at run time (what the
API sends and takes, what the JSONL transcript stores); the types are for mypy.

Inside Nerve a message may carry private keys starting with ``_`` (``_uuid``, ``_ephemeral``,
``_ui_only``); ``agent_cli.loop.messages.normalize_messages_for_api`` drops them before a
request. The constructors (``text_block``, ``tool_result_block``, ``system_reminder``) are the
one place tools build these shapes. Imports nothing of ours.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Base64Source",
    "CacheControl",
    "ContentBlock",
    "DocumentBlock",
    "ImageBlock",
    "ImageSource",
    "Message",
    "RedactedThinkingBlock",
    "ResultBlock",
    "Role",
    "ServerToolUseBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "UrlSource",
    "WebSearchResultBlock",
    "system_reminder",
    "text_block",
    "tool_result_block",
]

Role = Literal["user", "assistant"]


class CacheControl(TypedDict):
    """A prompt-cache breakpoint (``{"type": "ephemeral"}``)."""

    type: Literal["ephemeral"]
    ttl: NotRequired[str]


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str
    citations: NotRequired[list[dict[str, Any]]]
    cache_control: NotRequired[CacheControl]


class Base64Source(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


class UrlSource(TypedDict):
    type: Literal["url"]
    url: str


ImageSource = Base64Source | UrlSource


class ImageBlock(TypedDict):
    type: Literal["image"]
    source: ImageSource
    cache_control: NotRequired[CacheControl]


class DocumentBlock(TypedDict):
    """A PDF or plain-text document; ``source`` is base64, text, content or url."""

    type: Literal["document"]
    source: dict[str, Any]
    title: NotRequired[str]
    context: NotRequired[str]
    citations: NotRequired[dict[str, Any]]
    cache_control: NotRequired[CacheControl]


# What a tool_result's content list may hold.
ResultBlock = TextBlock | ImageBlock | DocumentBlock


class ToolUseBlock(TypedDict):
    """A call the model asks for. ``input`` is what it sent (an object, unless it sent junk)."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    cache_control: NotRequired[CacheControl]


class ToolResultBlock(TypedDict):
    """The answer to one ``tool_use``, in the user message right after it."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[str | list[ResultBlock]]
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl]


class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str


class RedactedThinkingBlock(TypedDict):
    """Encrypted thinking: only the API can read ``data``; it is sent back as it came."""

    type: Literal["redacted_thinking"]
    data: str


class ServerToolUseBlock(TypedDict):
    """A call of a tool the API runs itself (web search)."""

    type: Literal["server_tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class WebSearchResultBlock(TypedDict):
    """The API's answer to a ``server_tool_use``: a list of results, or an error object."""

    type: Literal["web_search_tool_result"]
    tool_use_id: str
    content: list[dict[str, Any]] | dict[str, Any]


ContentBlock = (
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ServerToolUseBlock
    | WebSearchResultBlock
)


class Message(TypedDict):
    """One message of the conversation. The ``_`` keys are Nerve's own and never sent:
    ``_uuid`` its transcript record, ``_ephemeral`` a reminder for the next request only,
    ``_ui_only`` shown and recorded but not sent to the model."""

    role: Role
    content: str | list[ContentBlock]
    _uuid: NotRequired[str]
    _ephemeral: NotRequired[bool]
    _ui_only: NotRequired[bool]


def text_block(text: str) -> TextBlock:
    return {"type": "text", "text": text}


def tool_result_block(
    tool_use_id: str, content: str | list[ResultBlock], *, is_error: bool = False
) -> ToolResultBlock:
    """A ``tool_result`` block; ``is_error`` appears only when true, as the API sends it."""
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def system_reminder(text: str) -> Message:
    """A user-role message the model sees on its next request (hook context, notices)."""
    return {
        "role": "user",
        "content": [text_block(f"<system-reminder>\n{text}\n</system-reminder>")],
    }
