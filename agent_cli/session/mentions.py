"""A typed prompt's ``@path`` mentions and pasted image paths, attached to the user message.

``explain @src/app.py`` sends the prompt text, then what a Read of the file gives, wrapped as
Claude Code wraps it (a Read call and its result). Each file is read through the tool pipeline
as a Read call: the same permission check (a ``Read(./secrets/**)`` deny holds; an ask prompts
in the app and follows the mode in print mode), hooks, limits and formatting (numbered lines,
the 2000-line default, long lines cut, binary and non-UTF-8 detection, images as image blocks,
a directory as a listing). ``@path#L10-20`` reads those lines. A pasted absolute path to a
``.png``/``.jpg``/``.gif``/``.webp`` attaches the image. A mention that names nothing, or that
may not be read, is left out with a note for the user (a warning) and for the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from agent_cli.customize.expand import ToolRunner, content_text
from agent_cli.customize.mention_refs import (
    Mention,
    find_mentions,
    find_pasted_images,
    resolve_ref,
)
from agent_cli.session.attachment_text import CALLED, RESULT
from tools.pipeline.types import CallOutcome
from tools.records import datarecord

__all__ = ["Attachments", "attach_mentions"]

_ERROR_TAGS = re.compile(r"</?tool_use_error>")


@datarecord
class Attachments:
    """``content``: the user message's blocks (None when nothing was attached or noted);
    ``shown``: one line per attached file for the transcript; ``notes``: warnings."""

    content: list[dict[str, Any]] | None = None
    shown: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    outcomes: list[CallOutcome] = field(default_factory=list)


def _display(path: Path, dirs: Sequence[Path]) -> str:
    for d in dirs:
        try:
            return str(path.relative_to(d)) or "."
        except ValueError:
            continue
    return str(path)


def _summary(outcome: CallOutcome, name: str) -> str:
    data = outcome.output
    kind = getattr(data, "kind", "")
    if kind == "text":
        lines = f"{data.num_lines} line" + ("" if data.num_lines == 1 else "s")
        if (data.start_line or 1) > 1 or data.partial:
            lines = f"lines {data.start_line}-{data.start_line + data.num_lines - 1}"
            lines += f" of {data.total_lines}" if data.total_lines else ""
        return f"Read {name} ({lines})"
    if kind == "directory":
        return f"Listed {name}"
    if kind == "notice":
        return f"Read {name} (empty)"
    return f"Read {name} ({kind or 'file'})"


def _targets(prompt: str) -> list[tuple[str, Mention]]:
    """(label, mention) for each ``@`` mention, then each pasted image path not mentioned."""
    mentions = find_mentions(prompt)
    targets = [(m.label, m) for m in mentions]
    named = {m.ref for m in mentions}
    for raw in find_pasted_images(prompt):
        if raw not in named:
            targets.append((raw, Mention(raw)))
    return targets


async def attach_mentions(
    prompt: str, *, run_tool: ToolRunner, dirs: Sequence[Path], home: Path
) -> Attachments:
    """Read what ``prompt`` mentions (module docstring) and build the user message's blocks."""
    result = Attachments()
    blocks: list[dict[str, Any]] = []
    pasted = set(find_pasted_images(prompt))
    for label, mention in _targets(prompt):
        path = resolve_ref(mention.ref, dirs, home)
        if path is None:
            if mention.ref in pasted:
                continue  # a pasted path that is not a file is only text
            if not (mention.quoted or mention.start or re.search(r"[./]", mention.ref)):
                continue  # a bare word (a decorator, a handle) is not a file mention
            result.notes.append(f"{label} was not attached: no such file or directory")
            blocks.append({"type": "text", "text": f"({label} was not attached: not found)"})
            continue
        inp = mention.read_input(path)
        outcome = await run_tool("Read", inp)
        result.outcomes.append(outcome)
        content = outcome.tool_result.get("content")
        if outcome.is_error:
            reason = _ERROR_TAGS.sub("", content_text(content)).strip() or "it could not be read"
            result.notes.append(f"{label} was not attached: {reason}")
            blocks.append({"type": "text", "text": f"({label} was not attached: {reason})"})
            continue
        call = CALLED + json.dumps(inp)
        blocks.append({"type": "text", "text": call})
        if isinstance(content, list):  # an image: its blocks, as the Read tool gives them
            parts = [b for b in content if isinstance(b, dict)]
            notes = [str(b.get("text", "")) for b in parts if b.get("type") == "text"]
            blocks.append({"type": "text", "text": "\n".join([RESULT, *notes])})
            blocks += [dict(b) for b in parts if b.get("type") != "text"]
        else:
            blocks.append({"type": "text", "text": f"{RESULT}\n{content}"})
        result.shown.append(_summary(outcome, _display(path, dirs)))
    if blocks:
        result.content = [{"type": "text", "text": prompt}, *blocks]
    return result
