"""Result budgets: per tool and per conversation.

Per tool: a result larger than ``min(tool.max_result_size_chars, GLOBAL_LIMIT_CHARS)`` is written
in full to ``<session_dir>/tool-results/<tool_use_id>.txt`` (``.json`` for block arrays) and the
model gets a ``<persisted-output>`` wrapper with a preview and the path, which it can Read.
Read declares an infinite limit: persisting its output would make the model Read the persisted
file, which could exceed the limit again, forever. Results with images are never persisted.

Per conversation: many results each just under their own limit still add up. ``ConversationBudget``
replaces the largest older results with their persisted previews once the total passes its
limit. Replacements are sticky and deterministic (same messages, same choice) so a replayed or
resumed conversation produces the same request bytes and the prompt cache stays warm.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.records import datarecord

if TYPE_CHECKING:
    from tools.messages import Message

__all__ = [
    "DEFAULT_CONVERSATION_BUDGET_CHARS",
    "GLOBAL_LIMIT_CHARS",
    "PREVIEW_CHARS",
    "ConversationBudget",
    "PersistedResult",
    "content_size",
    "empty_result_text",
    "format_size",
    "has_media",
    "persist_result",
    "persisted_wrapper",
    "preview_text",
    "result_limit",
    "tool_results_dir",
]

GLOBAL_LIMIT_CHARS = 50_000
PREVIEW_CHARS = 2_000
DEFAULT_CONVERSATION_BUDGET_CHARS = 200_000
_WRAPPER_OPEN = "<persisted-output>"
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_process_dir: Path | None = None

# tool_result content as the budget reads it: ``tools.messages.ResultBlock``s, or the plain
# dicts of a conversation read back from a transcript.
Content = str | Sequence[Mapping[str, Any]]


def format_size(n: int) -> str:
    """``N bytes`` / ``12.3KB`` / ``1.5MB`` / ``2GB`` (1024-based, trailing ``.0`` dropped)."""
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            text = f"{value:.1f}"
            return (text[:-2] if text.endswith(".0") else text) + unit
    raise AssertionError("unreachable")


def preview_text(text: str, limit: int = PREVIEW_CHARS) -> tuple[str, bool]:
    """The first ``limit`` chars, cut back to the last newline if that is past half-way.

    Returns the preview and whether anything was left out.
    """
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    newline = cut.rfind("\n")
    if newline > limit // 2:
        cut = cut[:newline]
    return cut, True


def persisted_wrapper(size_bytes: int, path: Path | str, preview: str, has_more: bool) -> str:
    """The exact text the model sees in place of a persisted result."""
    more = "\n..." if has_more else ""
    return (
        f"{_WRAPPER_OPEN}\nOutput too large ({format_size(size_bytes)}). "
        f"Full output saved to: {path}\n\nPreview (first 2KB):\n{preview}{more}\n"
        "</persisted-output>"
    )


def empty_result_text(tool_name: str) -> str:
    return f"({tool_name} completed with no output)"


def has_media(content: Content) -> bool:
    """Images or documents: never persisted (the model could not Read them back as they were)."""
    return isinstance(content, list) and any(
        b.get("type") in ("image", "document") for b in content if isinstance(b, dict)
    )


def _text_of(content: Content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def content_size(content: Content) -> int:
    """Size in chars as the budget counts it (text of text blocks for block arrays)."""
    if isinstance(content, str):
        return len(content)
    return sum(
        len(str(b.get("text", "")))
        for b in content
        if isinstance(b, dict) and b.get("type") == "text"
    )


def result_limit(max_result_size_chars: float) -> float:
    """The effective per-tool limit: the tool's own, capped globally; infinite stays infinite."""
    if math.isinf(max_result_size_chars):
        return math.inf
    return min(max_result_size_chars, GLOBAL_LIMIT_CHARS)


def tool_results_dir(session_dir: Path | None) -> Path:
    """``<session_dir>/tool-results``, or a per-process temp dir when there is no session."""
    global _process_dir
    if session_dir is not None:
        return Path(session_dir) / "tool-results"
    if _process_dir is None:
        _process_dir = Path(tempfile.mkdtemp(prefix="nerve-tool-results-"))
    return _process_dir


def _file_stem(tool_use_id: str) -> str:
    if _SAFE_ID.match(tool_use_id):
        return tool_use_id
    import hashlib

    # An id we cannot use as a file name as is (path separators, odd characters): hash it.
    return "id-" + hashlib.sha256(tool_use_id.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@datarecord(frozen=True, slots=True)
class PersistedResult:
    """A result written to disk: where, how big, and the wrapper that replaces it."""

    path: Path
    size_bytes: int
    wrapper: str


def persist_result(content: Content, tool_use_id: str, session_dir: Path | None) -> PersistedResult:
    """Write ``content`` in full and build its wrapper. Raises OSError if it cannot be written."""
    directory = tool_results_dir(session_dir)
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path = directory / f"{_file_stem(tool_use_id)}.txt"
        body = content
    else:
        path = directory / f"{_file_stem(tool_use_id)}.json"
        body = json.dumps(content, indent=2, ensure_ascii=False)
    data = body.encode("utf-8", "surrogateescape")
    path.write_bytes(data)
    preview, more = preview_text(_text_of(content))
    return PersistedResult(path, len(data), persisted_wrapper(len(data), path, preview, more))


def _is_persisted(content: Any) -> bool:
    return isinstance(content, str) and content.startswith(_WRAPPER_OPEN)


@datarecord(slots=True)
class ConversationBudget:
    """The conversation-wide result budget (one per conversation; a sub-agent gets a clone).

    ``exempt_tools`` are never persisted (Read: see module docstring). ``replaced`` maps every
    tool_use_id replaced so far to its wrapper; a replacement is never undone.
    """

    max_chars: int = DEFAULT_CONVERSATION_BUDGET_CHARS
    session_dir: Path | None = None
    exempt_tools: frozenset[str] = frozenset({"Read"})
    replaced: dict[str, str] = field(default_factory=dict)

    def clone(self) -> ConversationBudget:
        return ConversationBudget(
            self.max_chars, self.session_dir, self.exempt_tools, dict(self.replaced)
        )

    def enforce(self, messages: Sequence[Message]) -> list[str]:
        """Replace the largest older results until the total fits; returns newly replaced ids.

        Mutates the tool_result blocks of ``messages`` in place. The newest result is never
        replaced (the model has not seen it yet); ties in size go to the older result.
        """
        names = _tool_names(messages)
        blocks = list(_tool_result_blocks(messages))
        # Earlier decisions are re-applied first, so a rebuilt conversation matches the old one.
        for block in blocks:
            wrapper = self.replaced.get(str(block.get("tool_use_id")))
            if wrapper is not None and block.get("content") != wrapper:
                block["content"] = wrapper
        total = sum(content_size(_as_content(b.get("content"))) for b in blocks)
        if total <= self.max_chars:
            return []
        candidates = [
            (i, b)
            for i, b in enumerate(blocks[:-1])
            if names.get(str(b.get("tool_use_id"))) not in self.exempt_tools
            and not _is_persisted(b.get("content"))
            and not has_media(_as_content(b.get("content")))
            and content_size(_as_content(b.get("content"))) > PREVIEW_CHARS
        ]
        candidates.sort(key=lambda ib: (-content_size(_as_content(ib[1].get("content"))), ib[0]))
        newly: list[str] = []
        for _, block in candidates:
            if total <= self.max_chars:
                break
            tool_use_id = str(block.get("tool_use_id"))
            content = _as_content(block.get("content"))
            try:
                persisted = persist_result(content, tool_use_id, self.session_dir)
            except OSError:
                continue  # cannot write: keep the content rather than lose it
            before = content_size(content)
            block["content"] = persisted.wrapper
            self.replaced[tool_use_id] = persisted.wrapper
            total -= before - len(persisted.wrapper)
            newly.append(tool_use_id)
        return newly


def _as_content(value: Any) -> Content:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [b for b in value if isinstance(b, dict)]
    return ""


def _tool_names(messages: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    names: dict[str, str] = {}
    for msg in messages:
        content = msg.get("content")
        if msg.get("role") != "assistant" or not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                names[str(b.get("id"))] = str(b.get("name"))
    return names


def _tool_result_blocks(messages: Iterable[Mapping[str, Any]]) -> Iterable[dict[str, Any]]:
    for msg in messages:
        content = msg.get("content")
        if msg.get("role") != "user" or not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                yield b
