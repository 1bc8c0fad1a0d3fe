"""The words of a compaction: what the summary turn asks for and how its answer is used.

``summary_request`` is the last user message of the summary turn. The summary must let the work
go on without the conversation: the user's requests in their words, decisions, files touched,
errors and their fixes, pending work, the current plan and todos. ``continuation`` is the
user message the conversation continues from (recorded with ``isCompactSummary``).

A conversation too big to send even once is summarised in parts (``render_transcript`` and
``chunk_lines``): each part is sent as plain text with the summary so far, and the last answer is
the summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "SUMMARY_MARKER",
    "chunk_lines",
    "continuation",
    "extract_summary",
    "part_request",
    "render_transcript",
    "summary_request",
]

# Tests and the scripted server recognise the summary turn by this phrase.
SUMMARY_MARKER = "Your task now is to write a summary of the conversation so far"

_SECTIONS = """\
1. Requests: every request the user made, in order, quoting their own words where it matters.
2. Decisions: what was decided and why, including approaches that were rejected.
3. Files: each file read, created or changed, with what changed and the code that matters \
(function names, signatures, short snippets).
4. Errors and fixes: errors met, what caused them, how they were fixed; anything still failing.
5. Pending work: what was asked for and is not done yet.
6. Current work: exactly what was being done just before this summary, and the plan and the \
todo list as they stand.
7. Next step: the next step, only if it follows directly from the user's latest request."""

_FORMAT = """\
Respond with text only: do not call any tool. You may think first inside <analysis> tags; put \
the summary itself inside <summary></summary> tags, with these sections:

"""


def summary_request(instructions: str | None = None) -> str:
    """The text of the summary turn's user message (``/compact`` instructions appended)."""
    text = (
        f"{SUMMARY_MARKER}, so that the work can continue from the summary alone: the "
        "conversation above will be replaced by it. Be thorough about technical detail and "
        "brief about everything else.\n\n" + _FORMAT + _SECTIONS
    )
    if instructions and instructions.strip():
        text += f"\n\nAdditional instructions for this summary:\n{instructions.strip()}"
    return text


def part_request(previous: str | None, part: str, index: int, total: int) -> str:
    """The user message for one part of a conversation summarised in parts."""
    head = (
        f"{SUMMARY_MARKER}. The conversation is too long to send at once, so it comes in "
        f"{total} parts; this is part {index} of {total}, as a transcript.\n\n"
    )
    if previous:
        head += (
            "Summary of the earlier parts:\n<previous-summary>\n"
            f"{previous}\n</previous-summary>\n\n"
        )
    return (
        head
        + f"<transcript>\n{part}\n</transcript>\n\n"
        + "Write one summary of everything so far (the earlier parts included).\n\n"
        + _FORMAT
        + _SECTIONS
    )


_SUMMARY_TAG = re.compile(r"<summary>(.*?)(?:</summary>|\Z)", re.DOTALL)
_ANALYSIS_TAG = re.compile(r"<analysis>.*?(?:</analysis>|\Z)", re.DOTALL)


def extract_summary(text: str) -> str:
    """The summary from the answer: inside ``<summary>`` if present, analysis dropped."""
    match = _SUMMARY_TAG.search(text)
    if match:
        return match.group(1).strip()
    return _ANALYSIS_TAG.sub("", text).strip()


def continuation(summary: str, *, auto: bool) -> str:
    """The user message the compacted conversation starts from."""
    text = (
        "This session continues a conversation that was compacted to free context. The "
        "summary below covers the earlier part of the conversation.\n\n"
        f"<summary>\n{summary}\n</summary>"
    )
    if auto:
        text += (
            "\n\nContinue the work from where it left off, without asking the user further "
            "questions; carry on with the last task you were asked to do."
        )
    return text


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" […{len(text) - limit} chars cut]"


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text":
                parts.append(str(b.get("text", "")))
            elif isinstance(b, dict):
                parts.append(f"[{b.get('type')}]")
        return "\n".join(parts)
    return ""


def render_transcript(
    messages: Iterable[Mapping[str, Any]], *, result_chars: int = 2_000
) -> Iterator[str]:
    """The conversation as lines of plain text, one entry per line group; results clipped."""
    names: dict[str, str] = {}
    for msg in messages:
        role = "User" if msg.get("role") == "user" else "Assistant"
        content = msg.get("content")
        if isinstance(content, str):
            if content.strip():
                yield f"{role}: {content}"
            continue
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind == "text" and str(b.get("text", "")).strip():
                yield f"{role}: {b['text']}"
            elif kind == "tool_use":
                names[str(b.get("id"))] = str(b.get("name"))
                args = json.dumps(b.get("input"), ensure_ascii=False, default=str)
                yield f"Assistant called {b.get('name')}({_clip(args, result_chars)})"
            elif kind == "tool_result":
                name = names.get(str(b.get("tool_use_id")), "tool")
                err = " (error)" if b.get("is_error") else ""
                body = _clip(_result_text(b.get("content")), result_chars)
                yield f"{name} result{err}: {body}"


def chunk_lines(lines: Iterable[str], max_chars: int) -> list[str]:
    """Lines joined into parts of at most ``max_chars`` (a longer line is cut to fit)."""
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        line = _clip(line, max_chars - 64)
        if current and size + len(line) + 1 > max_chars:
            parts.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        parts.append("\n".join(current))
    return parts
