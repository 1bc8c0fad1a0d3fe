"""A transcript's records as read: every well-formed line (``read_records``: torn and garbage
lines skipped, with a warning) and the text a user typed in one (``prompt_text``).

Below both the reader (``transcript.TranscriptReader``) and the tail (``tail``, which reads a
compacted transcript from its last boundary on), which use them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_cli.transcripts.commands import typed_command

__all__ = ["prompt_text", "read_records"]


def read_records(
    path: Path, warnings: list[str] | None = None, start: int = 0
) -> Iterator[dict[str, Any]]:
    """Every well-formed record of a transcript (from byte ``start``, a line's start); torn and
    garbage lines are skipped (warned)."""
    warn = warnings if warnings is not None else []
    with open(path, "rb") as fh:
        fh.seek(start)
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            torn = not raw.endswith(b"\n")
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):  # bad JSON, bad UTF-8, absurd nesting
                what = "torn last line" if torn else "unreadable line"
                warn.append(f"{path.name}:{lineno}: skipped {what}")
                continue
            if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
                warn.append(f"{path.name}:{lineno}: skipped a line that is not a record")
                continue
            yield rec


def prompt_text(content: Any) -> str | None:
    """The text a user typed, from message content (a string or blocks); None if none."""
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text")).strip():
                return typed_command(str(b["text"])) or str(b["text"])
    return None
