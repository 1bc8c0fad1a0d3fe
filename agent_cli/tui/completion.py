"""Completion sources for the prompt (no Textual): slash commands and ``@path`` mentions."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tools.records import datarecord

__all__ = ["Completion", "mention_at", "path_completions", "slash_completions"]

MAX_ITEMS = 20
_MENTION = re.compile(r"(?:^|(?<=\s))@(\S*)$")


@datarecord(frozen=True, slots=True)
class Completion:
    """What replaces ``text[start:end]`` when chosen, and how the list shows it."""

    value: str
    label: str
    start: int
    end: int


def slash_completions(text: str, commands: dict[str, str]) -> list[Completion]:
    """Commands whose name starts with what follows ``/`` (only while the first word is typed)."""
    if not text.startswith("/") or any(c.isspace() for c in text):
        return []
    word = text[1:].lower()
    names = sorted(n for n in commands if n.startswith(word))
    return [Completion(f"/{n} ", f"/{n:<14} {commands[n]}", 0, len(text)) for n in names]


def mention_at(text: str, cursor: int) -> tuple[int, str] | None:
    """The ``@prefix`` that ends at the cursor: (offset of ``@``, prefix), or None."""
    m = _MENTION.search(text[:cursor])
    if m is None:
        return None
    return m.start(1) - 1, m.group(1)


def path_completions(cwd: Path, text: str, cursor: int) -> list[Completion]:
    """Files and directories (relative to ``cwd``) matching the ``@`` mention at the cursor.

    Hidden entries show only when the typed name starts with a dot; directories end with ``/``
    so choosing one keeps completing inside it. Unreadable directories give no items.
    """
    found = mention_at(text, cursor)
    if found is None:
        return []
    at, prefix = found
    head, _, name = prefix.rpartition("/")
    base = (cwd / head) if head else cwd
    if head.startswith("/") or head.startswith("~"):
        base = Path(os.path.expanduser(head or "/"))
    try:
        with os.scandir(base) as it:
            items = [(e.name, e.is_dir()) for e in it]
    except OSError:
        return []
    out: list[Completion] = []
    for entry_name, is_dir in sorted(items, key=lambda x: (not x[1], x[0].lower())):
        if entry_name.startswith(".") and not name.startswith("."):
            continue
        if not entry_name.lower().startswith(name.lower()):
            continue
        rel = f"{head}/{entry_name}" if head else entry_name
        if is_dir:
            rel += "/"
        # A file completes with a trailing space so typing can go on; a directory does not.
        value = "@" + rel + ("" if is_dir else " ")
        out.append(Completion(value, "@" + rel, at, cursor))
        if len(out) >= MAX_ITEMS:
            break
    return out
