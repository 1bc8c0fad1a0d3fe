"""Reading a compacted transcript from its last ``compact_boundary`` on, fast even when huge;
and the records that shape the conversation: boundaries, rewinds, prompts, checkpoints.

The conversation of a compacted session starts at its last boundary, so a resume need not parse
what came before. ``find_last_boundary`` searches the file backwards, a block at a time, for the
boundary's bytes and checks each hit is a real boundary record. Before it, only the session's
state records matter (permission mode, session rules, tasks, title); ``prefix_state_records``
parses just the lines that can be one: short lines that name a state type, and long lines that
start with one (Nerve writes ``type`` first).

The reader hands each boundary, rewind, prompt and ``file-history-snapshot`` record to the
functions at the end (``apply_system``, ``mark_prompt``, ``add_file_history``): a boundary starts
the conversation afresh; a rewind (``{"type":"system","subtype":"rewind","rewindTo":UUID}``)
cuts it back to before the prompt it names; a prompt's uuid is kept in ``reader.prompts``
(uuid -> index in ``reader.messages``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "STATE_TYPES",
    "add_file_history",
    "apply_system",
    "find_last_boundary",
    "mark_prompt",
    "prefix_state_records",
]

STATE_TYPES = (
    "permission-mode",
    "session-rule",
    "background-tasks",
    "custom-title",
    "summary",
    "read-file-state",
)
_NEEDLE = b'"compact_boundary"'
_BLOCK = 1 << 20
_STEP = 1 << 16
_SHORT_LINE = 4096
_HEAD = 256
_MARKERS = tuple(f'"type":"{t}"'.encode() for t in STATE_TYPES)


def _line_around(fh: BinaryIO, offset: int, size: int) -> tuple[int, bytes]:
    """The start offset and bytes of the line holding byte ``offset``."""
    start = offset
    while start > 0:
        lo = max(0, start - _STEP)
        fh.seek(lo)
        chunk = fh.read(start - lo)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            start = lo + nl + 1
            break
        start = lo
    end = offset
    while end < size:
        fh.seek(end)
        chunk = fh.read(_STEP)
        nl = chunk.find(b"\n")
        if nl >= 0:
            end += nl
            break
        end += len(chunk)
        if not chunk:
            break
    fh.seek(start)
    return start, fh.read(end - start)


def _is_boundary(line: bytes) -> bool:
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(rec, dict)
        and rec.get("type") == "system"
        and (rec.get("subtype") == "compact_boundary")
    )


def find_last_boundary(path: Path) -> int:
    """The byte offset where the last compact_boundary record's line starts; 0 if none."""
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        end = size
        while end > 0:
            start = max(0, end - _BLOCK)
            fh.seek(start)
            # A little past ``end``, so a hit cut by the block edge is still found.
            block = fh.read(end - start + len(_NEEDLE))
            pos = block.rfind(_NEEDLE)
            while pos >= 0:
                line_start, line = _line_around(fh, start + pos, size)
                if _is_boundary(line):
                    return line_start
                pos = block.rfind(_NEEDLE, 0, pos)
            end = start
    return 0


def _maybe_state(raw: bytes) -> bool:
    if len(raw) <= _SHORT_LINE:
        return any(m in raw for m in _MARKERS)
    head = raw[:_HEAD]
    return any(m in head for m in _MARKERS)


def prefix_state_records(path: Path, end: int) -> Iterator[dict[str, Any]]:
    """The state records before byte ``end``, and the file's first record (its session id)."""
    with open(path, "rb") as fh:
        pos = 0
        first = True
        for raw in fh:
            pos += len(raw)
            if pos > end:
                break
            if not (first or _maybe_state(raw)):
                continue
            first = False
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict) and isinstance(rec.get("type"), str):
                yield rec


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def mark_prompt(reader: Any, rec: dict[str, Any]) -> None:
    """A prompt the user typed (just appended to ``reader.messages``): ``/rewind`` returns to
    it by its record uuid, and it starts a checkpoint turn."""
    from agent_cli.transcripts.transcript import prompt_text

    uid = _str(rec.get("uuid"))
    if rec["type"] != "user" or rec.get("isMeta") or rec.get("isCompactSummary") or not uid:
        return
    content = rec["message"]["content"]
    if isinstance(content, list) and any(
        b.get("type") == "tool_result" for b in content if isinstance(b, dict)
    ):
        return
    if prompt_text(content) is None:
        return
    reader.prompts[uid] = len(reader.messages) - 1
    if uid not in reader.checkpoint_order:
        reader.checkpoint_order.append(uid)


def apply_system(reader: Any, rec: dict[str, Any]) -> bool:
    """A boundary starts the conversation afresh; a rewind cuts it back to before the prompt
    it names (the checkpoint turns stay: they still ran). True when messages were cut."""
    subtype = rec.get("subtype")
    if subtype == "compact_boundary":
        reader.compacted = True
        reader.messages.clear()
        reader.records.clear()
        reader.prompts.clear()
        reader.checkpoint_order.clear()
        reader.file_history.clear()
        reader.todos = None
        return True
    if subtype == "rewind":
        target = rec.get("rewindTo")
        index = reader.prompts.get(target) if isinstance(target, str) else None
        if index is None:
            return False
        del reader.messages[index:]
        for uid in [u for u, i in reader.prompts.items() if i >= index]:
            del reader.prompts[uid]
        cut = next(
            (j for j, r in enumerate(reader.records) if r.get("uuid") == target),
            len(reader.records),
        )
        del reader.records[cut:]
        return True
    return False


def add_file_history(reader: Any, rec: dict[str, Any]) -> None:
    """Merge one ``file-history-snapshot`` record into the turn it names."""
    snap = rec.get("snapshot")
    mid = _str(rec.get("messageId")) or (
        _str(snap.get("messageId")) if isinstance(snap, dict) else None
    )
    backups = snap.get("trackedFileBackups") if isinstance(snap, dict) else None
    if mid is None or not isinstance(backups, dict):
        return
    if mid not in reader.checkpoint_order:
        reader.checkpoint_order.append(mid)
    merged = reader.file_history.setdefault(mid, {})
    for path, entry in backups.items():
        merged.setdefault(str(path), entry)  # the first save in a turn is the one
