"""The todo list as a checklist: for ``/todos`` and for a finished TodoWrite call's widget.

A TodoWrite result's structured output (``tools.builtin.todo.TodoWriteOutput``, or the same as a
dict when it came through a transcript) carries the list as written; the checklist replaces the
generic "Todos have been modified..." text, which is meant for the model, not the user.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["GLYPHS", "TODO_TOOL", "checklist", "result_view", "todo_items"]

TODO_TOOL = "TodoWrite"
GLYPHS: dict[str, str] = {"pending": "☐", "in_progress": "◐", "completed": "☑"}


def todo_items(output: Any) -> list[dict[str, Any]] | None:
    """The new list in a TodoWrite output (model or dict); None when there is none."""
    if isinstance(output, Mapping):
        items = output.get("new_todos", output.get("newTodos"))
    else:
        items = getattr(output, "new_todos", None)
    if not isinstance(items, list):
        return None
    return [dict(t) for t in items if isinstance(t, Mapping)]


def checklist(items: Iterable[Mapping[str, Any]]) -> str:
    """One line per item: ☐ pending, ◐ in progress, ☑ completed (unknown status: ☐)."""
    lines = []
    for item in items:
        glyph = GLYPHS.get(str(item.get("status")), GLYPHS["pending"])
        content = " ".join(str(item.get("content", "")).split())  # one line per item
        lines.append(f"{glyph} {content}")
    return "\n".join(lines) if lines else "(no todos)"


def result_view(name: str, content: Any, is_error: bool, output: Any) -> tuple[Any, bool]:
    """What a finished tool widget shows, and whether it starts expanded.

    A successful TodoWrite shows its whole checklist; everything else its content, collapsed.
    """
    if name == TODO_TOOL and not is_error:
        items = todo_items(output)
        if items is not None:
            return checklist(items), True
    return content, False
