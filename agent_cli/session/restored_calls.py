"""What a reopened conversation needs to show its tool calls as they were shown live.

The transcript records each result's structured output (``toolUseResult``); the user's view of
a call ("Updated hello.py: 1 addition, 1 removal" with the diff, "Read 42 lines", a todo
checklist) is built from a few of its fields. Only those are kept (``view_fields``): a Read's
output also holds the whole file, which the model's copy of the result already has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["VIEW_KEYS", "restored_calls", "view_fields"]

VIEW_KEYS = frozenset(
    {"kind", "file_path", "diff", "created", "num_lines", "partial", "new_todos", "newTodos"}
)


def view_fields(output: Any) -> dict[str, Any]:
    """The fields of a tool's output (a model, or its dict from a transcript) a view reads."""
    if not isinstance(output, Mapping):
        dump = getattr(output, "model_dump", None)
        try:
            output = dump(mode="json") if callable(dump) else None
        except Exception:  # a model that cannot dump itself shows its content instead
            output = None
    if not isinstance(output, Mapping):
        return {}
    return {k: v for k, v in output.items() if k in VIEW_KEYS}


def restored_calls(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool_use id -> its output's view fields, from a transcript's user records."""
    calls: dict[str, dict[str, Any]] = {}
    for rec in records:
        result = rec.get("toolUseResult")
        if not isinstance(result, Mapping):
            continue
        tid = result.get("tool_use_id")
        fields = view_fields(result.get("output"))
        if isinstance(tid, str) and fields:
            calls[tid] = fields
    return calls
