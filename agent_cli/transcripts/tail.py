"""Reading a compacted transcript from its last ``compact_boundary`` on, fast even when huge;
and the records that shape the conversation: boundaries, rewinds, prompts, checkpoints.

The conversation of a compacted session starts at its last boundary, so a resume need not parse
what came before. Nerve notes where each boundary it writes starts (``write_boundary``, a hidden file beside the
transcript); ``find_last_boundary`` checks the note names a real boundary line and the reader
seeks there, so an uncompacted file costs nothing extra. Before it, only the session's
state records matter (permission mode, session rules, tasks, title, read files):
``prefix_state`` finds them the same way, by their ``"type":"<kind>"`` bytes, and parses only
those lines.

The reader hands each boundary, rewind, prompt and ``file-history-snapshot`` record to the
functions at the end (``apply_system``, ``mark_prompt``, ``add_file_history``): a boundary starts
the conversation afresh; a rewind (``{"type":"system","subtype":"rewind","rewindTo":UUID}``)
cuts it back to before the prompt it names; a prompt's uuid is kept in ``reader.prompts``
(uuid -> index in ``reader.messages``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from agent_cli.transcripts.records import prompt_text, read_records

__all__ = [
    "CONTEXT_TYPES",
    "STATE_TYPES",
    "add_file_history",
    "apply_context_record",
    "apply_system",
    "find_last_boundary",
    "hint_path",
    "mark_prompt",
    "prefix_state",
    "records_to_read",
    "write_boundary",
]

STATE_TYPES = (
    "permission-mode",
    "session-rule",
    "background-tasks",
    "custom-title",
    "summary",
    "read-file-state",
)
_BLOCK = 1 << 20
_STEP = 1 << 16
_STATE_PATTERN = re.compile(
    b'"type":"(' + "|".join(re.escape(t) for t in STATE_TYPES).encode() + b')"'
)
# Records of which only the last one before the boundary counts (each is a whole snapshot).
_LAST_ONLY = frozenset({b"permission-mode", b"read-file-state", b"custom-title", b"summary"})


def _line_at(fh: BinaryIO, offset: int) -> tuple[int, bytes]:
    """The start offset and bytes of the line holding byte ``offset`` (read around it)."""
    start = offset
    while start > 0:
        lo = max(0, start - _STEP)
        fh.seek(lo)
        nl = fh.read(start - lo).rfind(b"\n")
        if nl >= 0:
            start = lo + nl + 1
            break
        start = lo
    fh.seek(start)
    parts = []
    while chunk := fh.read(_STEP):
        nl = chunk.find(b"\n")
        if nl >= 0:
            parts.append(chunk[:nl])
            break
        parts.append(chunk)
    return start, b"".join(parts)


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) and isinstance(rec.get("type"), str) else None


def _is_boundary(line: bytes) -> bool:
    rec = _record(line)
    return rec is not None and rec["type"] == "system" and rec.get("subtype") == "compact_boundary"


def hint_path(path: Path) -> Path:
    """Where the offset of a transcript's last compact_boundary is noted (a hidden file
    beside it)."""
    return path.with_name(f".{path.stem}.boundary")


def write_boundary(writer: Any, trigger: str, pre_tokens: int) -> str:
    """Append Claude Code's boundary record to ``writer`` (a ``TranscriptWriter``) and note
    where it starts, so a resume can seek there. Returns the record's uuid."""
    path = getattr(writer, "path", None)
    try:
        offset = os.path.getsize(path) if isinstance(path, Path) else None
    except OSError:
        offset = None
    uid: str = writer.system(
        "compact_boundary",
        "Conversation compacted",
        parentUuid=None,
        logicalParentUuid=getattr(writer, "last_uuid", None),
        level="info",
        compactMetadata={"trigger": trigger, "preTokens": pre_tokens},
    )
    if isinstance(path, Path) and offset is not None:
        hint = hint_path(path)
        tmp = hint.with_name(hint.name + ".tmp")
        try:
            tmp.write_text(f"{offset}\n")
            os.replace(tmp, hint)
        except OSError:
            pass  # without the note a resume reads the whole file: slower, same result
    return uid


def find_last_boundary(path: Path) -> int:
    """Where to start reading ``path``: the last compact_boundary Nerve noted, checked to be a
    boundary line; 0 when there is none or the note is wrong.

    Starting at any boundary is correct, since the reader starts the conversation afresh at
    each boundary it meets: a stale note (a later compaction by another program) only means
    more to read. A transcript without a note costs nothing extra."""
    try:
        offset = int(hint_path(path).read_text().strip())
    except (OSError, ValueError):
        return 0
    try:
        with open(path, "rb") as fh:
            if offset <= 0 or offset >= fh.seek(0, 2):
                return 0
            start, line = _line_at(fh, offset)
    except OSError:
        return 0
    return offset if start == offset and _is_boundary(line) else 0


def prefix_state(path: Path, end: int) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The file's first record (it names the session) and the state records before byte
    ``end`` in file order (one pass over the bytes in blocks; only the lines found are
    parsed): every session rule and task list, only the last of the snapshot types."""
    overlap = max(len(t) for t in STATE_TYPES) + 10
    every: dict[int, bytes] = {}  # line start -> line, for the kinds where each one counts
    snapshots: dict[bytes, list[int]] = {}  # snapshot kind -> offsets of its hits
    with open(path, "rb") as fh:
        pos = 0
        while pos < end:
            fh.seek(pos)
            block = fh.read(min(_BLOCK, end - pos) + overlap)
            for match in _STATE_PATTERN.finditer(block):
                hit = pos + match.start()
                if hit >= end:
                    continue
                if match.group(1) in _LAST_ONLY:
                    snapshots.setdefault(match.group(1), []).append(hit)
                else:
                    start, line = _line_at(fh, hit)
                    every[start] = line
            pos += _BLOCK
        for kind, hits in snapshots.items():
            # The last one that really is such a record (a look-alike inside another record
            # does not parse as one).
            for hit in sorted(set(hits), reverse=True):
                start, line = _line_at(fh, hit)
                rec = _record(line)
                if rec is not None and rec["type"] == kind.decode():
                    every[start] = line
                    break
        _, first = _line_at(fh, 0)
    records = [rec for _, line in sorted(every.items()) if (rec := _record(line)) is not None]
    return _record(first), [rec for rec in records if rec["type"] in STATE_TYPES]


CONTEXT_TYPES = frozenset({"file-history-snapshot", "todo-list"})


def records_to_read(path: Path, warnings: list[str]) -> tuple[Iterable[dict[str, Any]], str | None]:
    """The records a resume reads, and the session id when it is not among them: from the
    last noted boundary on, after the state records found before it; else the whole file."""
    start = find_last_boundary(path)
    records = read_records(path, warnings, start)
    if not start:
        return records, None
    first, state = prefix_state(path, start)
    return itertools.chain(state, records), _str((first or {}).get("sessionId"))


def apply_context_record(reader: Any, rec: dict[str, Any]) -> None:
    """A checkpoint (``file-history-snapshot``) or the todo list a compaction recorded."""
    if rec["type"] == "file-history-snapshot":
        add_file_history(reader, rec)
    elif isinstance(rec.get("todos"), list):
        reader.todos = [t for t in rec["todos"] if isinstance(t, dict)]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def mark_prompt(reader: Any, rec: dict[str, Any]) -> None:
    """A prompt the user typed (just appended to ``reader.messages``): ``/rewind`` returns to
    it by its record uuid, and it starts a checkpoint turn."""
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
