"""A typed slash command as stored: Claude Code's ``<command-name>`` header, shown as typed.

A custom command's turn is recorded as two text blocks, the header (``<command-message>``,
``<command-name>/review</command-name>``, ``<command-args>12</command-args>``) and the expanded
body. Pickers and resumed conversations show ``/review 12``, what the user typed.
"""

from __future__ import annotations

import re

__all__ = ["typed_command"]

_NAME = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def typed_command(text: str) -> str | None:
    """``/name args`` for a stored command header; None for any other text."""
    if not text.lstrip().startswith(("<command-message>", "<command-name>")):
        return None
    name = _NAME.search(text)
    if name is None:
        return None
    args = _ARGS.search(text)
    return f"/{name.group(1)} {args.group(1).strip() if args else ''}".rstrip()
