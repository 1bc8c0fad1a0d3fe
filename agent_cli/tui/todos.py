"""The todo list as a checklist: for ``/todos`` and for a finished TodoWrite call's widget.

A TodoWrite result's structured output (``tools.builtin.todo.TodoWriteOutput``, or the same as a
dict when it came through a transcript) carries the list as written; the checklist replaces the
generic "Todos have been modified..." text, which is meant for the model, not the user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_cli.slash.text import checklist

__all__ = ["TODO_TOOL", "result_view", "todo_items"]

TODO_TOOL = "TodoWrite"


def todo_items(output: Any) -> list[dict[str, Any]] | None:
    """The new list in a TodoWrite output (model or dict); None when there is none."""
    if isinstance(output, Mapping):
        items = output.get("new_todos", output.get("newTodos"))
    else:
        items = getattr(output, "new_todos", None)
    if not isinstance(items, list):
        return None
    return [dict(t) for t in items if isinstance(t, Mapping)]


def result_view(name: str, content: Any, is_error: bool, output: Any) -> tuple[Any, bool]:
    """What a finished tool widget shows, and whether it starts expanded.

    A successful TodoWrite shows its whole checklist; everything else its content, collapsed.
    """
    if name == TODO_TOOL and not is_error:
        items = todo_items(output)
        if items is not None:
            return checklist(items), True
    return content, False
