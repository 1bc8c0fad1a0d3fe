"""The text an ``@path`` attachment is stored as, and how a reopened conversation shows it.

Kept free of the tool pipeline and pydantic: the TUI's conversation view imports it before its
first frame to show a resumed message's attachments as one ``Read <path>`` line each.
"""

from __future__ import annotations

import json
import re

__all__ = ["CALLED", "RESULT", "attachment_line"]

CALLED = "Called the Read tool with the following input: "
RESULT = "Result of calling the Read tool:"
_NOTE = re.compile(r"^\((@.+ was not attached: .+)\)$", re.S)


def attachment_line(text: str) -> str | None:
    """How a stored user message's text block shows when a conversation is opened again: an
    attachment's call as one ``Read <path>`` line, its result not at all (""), a note as it
    was; None for any other text (the prompt itself)."""
    if text.startswith(RESULT):
        return ""
    if text.startswith(CALLED):
        try:
            inp = json.loads(text[len(CALLED) :])
        except ValueError:
            return None
        return f"Read {inp.get('file_path', '?')}" if isinstance(inp, dict) else None
    m = _NOTE.match(text)
    return m.group(1) if m else None
