"""What the user reads for a finished tool call, where the model's text is written for the model.

An edit shows "Updated hello.py: 1 addition, 1 removal" and its diff, also in the full transcript
(the model gets "The file ... has been updated. Here's the result of running `cat -n` ..."); a
file read shows "Read 42
lines" (the numbered text is for the model; Ctrl+O shows it); a rejected edit "Rejected edit of
hello.py". Everything else shows its content. Structured outputs arrive as models (live) or as
dicts (from a transcript); both are read here.

A call's header (``Bash(git status)``) is the model's input: it is shown revealed
(``shown_header``), so a command that hides a second one behind ``\\r`` or an escape sequence
reads in the conversation as it reads in the permission prompt, with its ``\\r`` and ``\\x1b``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.tui.todos import result_view
from tools.terminal_text import reveal

__all__ = ["EDIT_TOOLS", "UserView", "diff_counts", "rejected_label", "shown_header", "user_view"]

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})


class UserView:
    """A finished call as shown: ``text``, whether it starts ``expanded``, and the ``detail``
    (the model's text) the full transcript (Ctrl+O) shows instead, when they differ."""

    __slots__ = ("detail", "expanded", "text")

    def __init__(self, text: Any, expanded: bool = False, detail: Any = None) -> None:
        self.text = text
        self.expanded = expanded
        self.detail = detail


def shown_header(header: str) -> str:
    """A call's header as the conversation shows it: every control character and invisible
    one written out (``\\x1b``, ``\\r``, ``\\u202e``), newlines and tabs kept."""
    return reveal(header)


def _fields(output: Any) -> Mapping[str, Any]:
    if isinstance(output, Mapping):
        return output
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        data = dump()
        return data if isinstance(data, Mapping) else {}
    return {}


def _shown_path(path: str, cwd: Path | None) -> str:
    if cwd is not None:
        try:
            return str(Path(path).relative_to(cwd))
        except ValueError:
            pass
    return path


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def diff_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (its ``---``/``+++`` headers not counted)."""
    adds = removes = 0
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("+"):
            adds += 1
        elif line.startswith("-"):
            removes += 1
    return adds, removes


def _diff_body(diff: str) -> str:
    return "\n".join(ln for ln in diff.splitlines() if not ln.startswith(("+++", "---")))


def _edit_view(data: Mapping[str, Any], cwd: Path | None) -> UserView | None:
    path, diff = data.get("file_path"), data.get("diff")
    if not isinstance(path, str) or not isinstance(diff, str):
        return None
    shown = _shown_path(path, cwd)
    adds, removes = diff_counts(diff)
    if data.get("created") or data.get("kind") == "create":
        head = f"Created {shown} ({_plural(adds, 'line')})"
    else:
        head = f"Updated {shown}: {_plural(adds, 'addition')}, {_plural(removes, 'removal')}"
    body = _diff_body(diff)
    return UserView(f"{head}\n{body}" if body else head)


def _read_view(data: Mapping[str, Any], content: Any) -> UserView | None:
    lines = data.get("num_lines")
    if data.get("kind") != "text" or not isinstance(lines, int):
        return None
    partial = " (partial)" if data.get("partial") else ""
    return UserView(f"Read {_plural(lines, 'line')}{partial}", detail=content)


def user_view(
    name: str, content: Any, is_error: bool, output: Any, cwd: Path | None = None
) -> UserView:
    """What a finished call shows the user (see the module docstring)."""
    shown, expanded = result_view(name, content, is_error, output)
    if expanded or is_error:
        return UserView(shown, expanded)
    data = _fields(output)
    view = None
    if name in EDIT_TOOLS:
        view = _edit_view(data, cwd)
    elif name == "Read":
        view = _read_view(data, content)
    return view if view is not None else UserView(shown)


def rejected_label(name: str, tool_input: Mapping[str, Any], text: str, cwd: Path | None) -> str:
    """ "Rejected edit of hello.py" (with any feedback) for a rejected edit; else ``text``."""
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if name not in EDIT_TOOLS or not isinstance(path, str) or not text.startswith("Rejected"):
        return text
    return f"Rejected edit of {_shown_path(path, cwd)}{text[len('Rejected') :]}"
