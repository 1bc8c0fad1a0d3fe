"""Formatter hooks: a file Nerve just wrote and a PostToolUse hook then rewrote stays editable.

Write, Edit and NotebookEdit record what they wrote in the read-file state, so the next Edit
needs no new Read. A formatter hook (``ruff format``, ``prettier --write``) changes the file
right after, and the next Edit would refuse it as changed since read. So the pipeline's step 12
(``pipeline.hooks``) notes the record before the PostToolUse hooks run and, after them, when the
file now differs and nobody else recorded it meanwhile, records the new content and tells the
model (a system reminder with the change). Only the hooks' own window is absorbed: a change made later, by anyone, still makes
Edit refuse.
"""

from __future__ import annotations

import difflib
import os
import time
from pathlib import Path

from permissions.types import ToolKind
from tools.context import ReadFileState, ReadRecord, content_hash
from tools.messages import system_reminder
from tools.pipeline.types import CallState
from tools.records import datarecord

__all__ = [
    "MAX_DIFF_CHARS",
    "WrittenFile",
    "absorb_hook_rewrite",
    "note_written_file",
    "read_before",
]

MAX_DIFF_CHARS = 4_000


@datarecord(frozen=True, slots=True)
class WrittenFile:
    """The record a file-writing tool left, taken before the PostToolUse hooks run."""

    path: Path
    record: ReadRecord


def note_written_file(state: CallState) -> WrittenFile | None:
    """The file this successful call wrote (with the record it left), or None."""
    result = state.result
    if (
        result is None
        or result.is_error
        or state.tool is None
        or state.tool.permission_kind != ToolKind.EDIT
    ):
        return None
    path_text = getattr(result.data, "file_path", None)
    if not isinstance(path_text, str):
        return None
    path = Path(os.path.realpath(path_text))
    rec = state.ctx.state.read_files.get(path)
    if rec is None or rec.partial or not rec.content_hash:
        return None
    return WrittenFile(path, rec)


def _read(path: Path) -> tuple[bytes, int] | None:
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            return f.read(), st.st_mtime_ns
    except OSError:
        return None


def _diff(path: Path, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    text = "".join(difflib.unified_diff(a, b, f"{path} (as written)", f"{path} (now)", n=2))
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + "\n[diff truncated; Read the file for the rest]\n"
    return text


def absorb_hook_rewrite(state: CallState, written: WrittenFile, before: bytes | None) -> None:
    """After the hooks: take a hook's rewrite of ``written`` into the read-file state."""
    files: ReadFileState = state.ctx.state.read_files
    if files.get(written.path) is not written.record:
        return  # someone recorded the file meanwhile; theirs is the newer view
    now = _read(written.path)
    if now is None:
        return
    data, mtime = now
    if content_hash(data) == written.record.content_hash:
        return
    files.record(
        ReadRecord(
            path=written.path,
            content_hash=content_hash(data),
            mtime_ns=mtime,
            partial=False,
            timestamp=time.time(),
        )
    )
    change = _diff(written.path, before, data) if before is not None else ""
    note = (
        f"The file {written.path} was changed by a PostToolUse hook (e.g. a formatter) after "
        f"{state.tool_name} wrote it. Its current content is what counts now: base the next "
        "Edit on it."
    )
    state.post_messages.append(system_reminder(note + (f"\n{change}" if change else "")))


def read_before(written: WrittenFile | None) -> bytes | None:
    """The bytes on disk right after the tool wrote them (the diff's left side)."""
    if written is None:
        return None
    now = _read(written.path)
    return None if now is None else now[0]
