"""What the file tools share: the path field (validation, backfill, permission paths), the
presentation of a change (message for the model, diff for the UI), and ``change_tool``, which
builds Edit, Write and NotebookEdit around their ``FileChange``.

Read, Edit, Write and NotebookEdit take a required absolute path (``file_path`` or
``notebook_path``); Glob and Grep an optional ``path`` that defaults to the cwd. Each tool
plugs the three functions of its ``PathField`` into ``build_tool``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from permissions.types import ToolKind
from tools.base import ProgressFn, Tool, build_tool, default_to_content
from tools.builtin._fs import is_absolute_input, record_whole_file, resolve_path
from tools.context import ToolUseContext
from tools.messages import ResultBlock
from tools.records import datarecord
from tools.result import ToolResult, ValidationError

__all__ = [
    "ChangeOutput",
    "FileChange",
    "PathField",
    "Written",
    "apply_change",
    "change_content",
    "change_summary",
    "change_tool",
    "preview_change",
]

M = TypeVar("M", bound=BaseModel)


@datarecord(frozen=True, slots=True)
class PathField:
    """``name`` is the input field; ``required`` fields must be absolute (or ``~/…``)."""

    name: str
    required: bool = True

    def _raw(self, inp: Any) -> str | None:
        value = getattr(inp, self.name)
        return value if isinstance(value, str) else None

    def check(self, inp: Any) -> ValidationError | None:
        """The shared part of ``validate_input``: absolute required paths, no "undefined"."""
        raw = self._raw(inp)
        if self.required:
            if raw is None or not is_absolute_input(raw):
                return ValidationError(
                    f"{self.name} must be an absolute path, not a relative path: {raw!r}. "
                    "Use an absolute path (e.g. /home/user/project/file.py)."
                )
        elif raw in ("undefined", "null"):
            return ValidationError('Omit path for the current directory; do not pass "undefined".')
        return None

    def backfill(self, inp: M, ctx: ToolUseContext) -> M:
        """A copy with the path absolute and normalised (``~`` expanded) for hooks and rules."""
        raw = self._raw(inp)
        if raw is None:
            return inp
        return inp.model_copy(update={self.name: str(resolve_path(raw, ctx.cwd))})

    def paths(self, inp: Any, ctx: ToolUseContext) -> tuple[Path, ...]:
        """What the permission engine judges: the path, or the cwd when it is omitted."""
        raw = self._raw(inp)
        return (resolve_path(raw, ctx.cwd) if raw else ctx.cwd,)


class ChangeOutput(Protocol):
    """The output of a file-changing tool: a message for the model and a diff for the UI."""

    message: str
    diff: str


def change_content(data: Any) -> str | list[ResultBlock]:
    """``to_content`` of Edit, Write and NotebookEdit: the model gets the message only."""
    message = getattr(data, "message", None)
    if isinstance(message, str) and isinstance(getattr(data, "diff", None), str):
        return message
    return default_to_content(data)


def change_summary(data: Any) -> str:
    """``render_result`` of the same tools: the diff when there is one, else the message."""
    diff = getattr(data, "diff", None)
    message = getattr(data, "message", None)
    if isinstance(diff, str) and isinstance(message, str):
        return diff or message
    return str(data)


# What a file-changing tool wrote: the path, the bytes and the mtime after the write.
Written = tuple[Path, bytes, int]


async def apply_change(
    apply: Callable[[Any, ToolUseContext], tuple[ToolResult, Written | None]],
    inp: Any,
    ctx: ToolUseContext,
    *,
    path: Path,
    verb: str,
) -> ToolResult:
    """``call`` of Edit, Write and NotebookEdit: write off the event loop, report OS errors to
    the model, and record what was written so the next change needs no new Read."""
    try:
        result, written = await asyncio.to_thread(apply, inp, ctx)
    except OSError as exc:
        return ToolResult(data=f"Cannot {verb} {path}: {exc.strerror or exc}.", is_error=True)
    if written is not None:
        record_whole_file(ctx.state.read_files, *written)
    return result


async def preview_change(
    plan: Callable[[Any, ToolUseContext], Any],
    inp: Any,
    ctx: ToolUseContext,
    render: Callable[[Any], str],
) -> tuple[str | None, None]:
    """``prepare_prompt`` of the same tools: the planned change rendered for the permission
    prompt, or no preview when it cannot be planned (the call itself will report why)."""
    try:
        planned = await asyncio.to_thread(plan, inp, ctx)
    except OSError:
        return None, None
    if isinstance(planned, str):
        return None, None
    return render(planned), None


@datarecord(frozen=True, slots=True)
class FileChange(Generic[M]):
    """How a file-changing tool changes its file: the path ``field`` (validated, then ``check``
    runs), the ``plan`` of the change (or the error for the model), the plan rendered for the
    permission prompt, and ``apply``, which writes it (``verb`` names it in OS errors)."""

    field: PathField
    plan: Callable[[Any, ToolUseContext], Any]
    apply: Callable[[Any, ToolUseContext], tuple[ToolResult, Written | None]]
    render_plan: Callable[[Any, M], str]
    verb: str
    check: Callable[[M], ValidationError | None] | None = None


def change_tool(
    *,
    name: str,
    input_model: type[M],
    description: str,
    search_hint: str,
    change: FileChange[M],
) -> Tool[M]:
    """Edit, Write and NotebookEdit: one shape of tool around a ``plan`` and its ``apply``.

    The path field is validated (then ``change.check`` runs), backfilled and judged as an
    edit; the permission prompt previews ``change.render_plan(plan, inp)``; the call writes
    through ``apply_change``; the model gets the change's message and the UI its diff.
    """
    field = change.field

    async def call(inp: M, ctx: ToolUseContext, progress: ProgressFn) -> ToolResult:
        path = resolve_path(getattr(inp, field.name), ctx.cwd)
        return await apply_change(change.apply, inp, ctx, path=path, verb=change.verb)

    async def prepare_prompt(inp: M, ctx: ToolUseContext) -> tuple[str | None, None]:
        return await preview_change(
            change.plan, inp, ctx, lambda planned: change.render_plan(planned, inp)
        )

    def validate(inp: M, _ctx: ToolUseContext) -> ValidationError | None:
        if (error := field.check(inp)) is not None:
            return error
        return change.check(inp) if change.check is not None else None

    return build_tool(
        name=name,
        input_model=input_model,
        call=call,
        description=description,
        search_hint=search_hint,
        validate_input=validate,
        permission_kind=ToolKind.EDIT,
        permission_paths=field.paths,
        backfill_input=field.backfill,
        to_content=change_content,
        render_call=lambda inp: str(getattr(inp, field.name)),
        render_result=change_summary,
        prepare_prompt=prepare_prompt,
    )
