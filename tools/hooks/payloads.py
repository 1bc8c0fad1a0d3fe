"""``tool_response`` in hook payloads, shaped as Claude Code's tool results (field for field).

Hooks written for Claude Code read ``tool_response.stdout`` (Bash), ``tool_response.filePath``
(Write/Edit), ``tool_response.file.content`` (Read), ``tool_response.filenames`` (Glob/Grep).
Nerve's own result models differ, so this module maps each built-in's data onto Claude Code's
shape; other tools (MCP, the rest) pass through as plain JSON.

Where Nerve has less than Claude Code the field is still present with the nearest value:
Bash merges stderr into stdout (the command runs with ``2>&1``), so ``stderr`` is ``""``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["hook_tool_response", "structured_patch"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def structured_patch(diff: str) -> list[dict[str, Any]]:
    """A unified diff as Claude Code's ``structuredPatch`` hunks (``oldStart``... ``lines``)."""
    hunks: list[dict[str, Any]] = []
    for line in diff.splitlines():
        m = _HUNK.match(line)
        if m:
            hunks.append(
                {
                    "oldStart": int(m.group(1)),
                    "oldLines": int(m.group(2) if m.group(2) is not None else 1),
                    "newStart": int(m.group(3)),
                    "newLines": int(m.group(4) if m.group(4) is not None else 1),
                    "lines": [],
                }
            )
        elif hunks and line[:1] in (" ", "+", "-", "\\"):
            hunks[-1]["lines"].append(line)
    return hunks


def _bash(data: Any, inp: dict[str, Any], plain: Any) -> Any:
    output = getattr(data, "output", None)
    if not isinstance(output, str):
        return plain
    return {
        "stdout": output,
        "stderr": "",
        "interrupted": bool(getattr(data, "interrupted", False)),
        "isImage": getattr(data, "image", None) is not None,
    }


def _write(data: Any, inp: dict[str, Any], plain: Any) -> Any:
    path = getattr(data, "file_path", None)
    if not isinstance(path, str):
        return plain
    return {
        "type": getattr(data, "kind", "update"),
        "filePath": path,
        "content": inp.get("content", ""),
        "structuredPatch": structured_patch(getattr(data, "diff", "")),
        "originalFile": getattr(data, "original_file", None),
        "userModified": False,
    }


def _edit(data: Any, inp: dict[str, Any], plain: Any) -> Any:
    path = getattr(data, "file_path", None)
    if not isinstance(path, str):
        return plain
    return {
        "filePath": path,
        "oldString": inp.get("old_string", ""),
        "newString": inp.get("new_string", ""),
        "originalFile": getattr(data, "original_file", None),
        "structuredPatch": structured_patch(getattr(data, "diff", "")),
        "userModified": False,
        "replaceAll": bool(inp.get("replace_all", False)),
    }


def _read(data: Any, inp: dict[str, Any], plain: Any) -> Any:
    path = getattr(data, "file_path", None)
    kind = getattr(data, "kind", None)
    content = getattr(data, "content", None)
    if not isinstance(path, str) or not isinstance(kind, str):
        return plain
    file: dict[str, Any] = {"filePath": path}
    if kind == "text" and isinstance(content, str):
        file.update(
            content=content,
            numLines=getattr(data, "num_lines", None) or 0,
            startLine=getattr(data, "start_line", None) or 1,
            totalLines=getattr(data, "total_lines", None) or 0,
        )
    else:
        file["content"] = content
    return {"type": kind, "file": file}


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln and not ln.startswith("(Results are truncated")]


def _glob(data: Any, inp: dict[str, Any], plain: Any) -> Any:
    if not isinstance(data, str):
        return plain
    names = [] if data == "No files found" else _lines(data)
    return {
        "filenames": names,
        "durationMs": 0,
        "numFiles": len(names),
        "truncated": "truncated" in data.rsplit("\n", 1)[-1].lower(),
    }


def _grep(data: Any, inp: dict[str, Any], plain: Any) -> Any:
    if not isinstance(data, str):
        return plain
    mode = inp.get("output_mode") or "files_with_matches"
    empty = data in ("No files found", "No matches found")
    out: dict[str, Any] = {"mode": mode}
    if mode == "files_with_matches":
        names = [] if empty else _lines(data)[1:]  # the first line is "Found N files"
        out.update(numFiles=len(names), filenames=names)
    else:
        lines = [] if empty else _lines(data)
        out.update(numFiles=0, filenames=[], content=data if not empty else "")
        out["numLines"] = len(lines)
    return out


_MAPPERS: dict[str, Callable[[Any, dict[str, Any], Any], Any]] = {
    "Bash": _bash,
    "Write": _write,
    "Edit": _edit,
    "Read": _read,
    "Glob": _glob,
    "Grep": _grep,
}


def hook_tool_response(tool_name: str, tool_input: dict[str, Any], data: Any, plain: Any) -> Any:
    """Claude Code's ``tool_response`` for a built-in's ``data``; ``plain`` (JSON) otherwise."""
    mapper = _MAPPERS.get(tool_name)
    if mapper is None:
        return plain
    try:
        return mapper(data, tool_input, plain)
    except Exception:  # a shape we did not expect: the plain JSON is still an answer
        return plain
