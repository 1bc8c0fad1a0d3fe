"""After a compaction: the files the model read most recently, attached again within a budget.

The summary says what was done; the files it was done to are what the model needs next. The most
recently read text files (at most ``MAX_FILES``, each cut at ``FILE_TOKENS``, all together at
most ``TOTAL_TOKENS``) are read again from disk as they are now and attached as one reminder,
numbered as Read numbers them. The read-file state afterwards holds only these files: a file
the model no longer has in its context must be read again before it is edited.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from agent_cli.loop.context_meter import CHARS_PER_TOKEN
from tools.builtin._fs import special_file_reason, state_key
from tools.builtin._text import number_lines
from tools.context import ReadRecord, content_hash
from tools.records import datarecord

__all__ = ["FILE_TOKENS", "MAX_FILES", "TOTAL_TOKENS", "Reattached", "reattach_files"]

MAX_FILES = 5
FILE_TOKENS = 5_000
TOTAL_TOKENS = 20_000
_MAX_BYTES = 2 * 1024 * 1024  # a bigger file is not read again at all


@datarecord(frozen=True, slots=True)
class Reattached:
    """The reminder text (empty when nothing was attached) and the new read-file records."""

    text: str
    records: tuple[ReadRecord, ...]
    paths: tuple[str, ...]


def _read(path: Path) -> tuple[bytes, int] | None:
    if special_file_reason(path):
        return None
    try:
        st = path.stat()
        if not path.is_file() or st.st_size > _MAX_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary (images, PDFs...): the model reads those with Read when needed
    return data, st.st_mtime_ns


def reattach_files(recent: Sequence[ReadRecord]) -> Reattached:
    """Re-read the newest of ``recent`` (oldest first, as the read-file state lists them)."""
    left = TOTAL_TOKENS * CHARS_PER_TOKEN
    parts: list[str] = []
    records: list[ReadRecord] = []
    paths: list[str] = []
    for rec in reversed(recent):
        if len(paths) >= MAX_FILES or left <= 0:
            break
        got = _read(rec.path)
        if got is None:
            continue
        data, mtime_ns = got
        text = data.decode("utf-8", "replace")
        limit = min(FILE_TOKENS * CHARS_PER_TOKEN, left)
        cut = len(text) > limit
        if cut:
            text = text[:limit].rsplit("\n", 1)[0] if "\n" in text[:limit] else text[:limit]
        body = number_lines(text)
        note = " (cut to its first lines; Read it for the rest)" if cut else ""
        parts.append(f"Contents of {rec.path}{note}:\n{body}")
        left -= len(body)
        paths.append(str(rec.path))
        records.append(
            ReadRecord(state_key(rec.path), content_hash(data), mtime_ns, cut, time.time())
        )
    if not parts:
        return Reattached("", (), ())
    head = "Files you read before the conversation was compacted, as they are on disk now:"
    return Reattached("\n\n".join([head, *parts]), tuple(reversed(records)), tuple(paths))
