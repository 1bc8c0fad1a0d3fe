"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook the model has read.

Cells are addressed by their id, or by ``cell-N`` (0-based index) for notebooks older than
nbformat 4.5 that have no ids; Read shows the same names. A replaced code cell loses its outputs
and execution count (they described the old source). The notebook is validated with nbformat
before it is written, atomically, with its permission bits kept. nbformat is imported lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.builtin._fs import (
    atomic_write,
    check_writable_state,
    missing_file_message,
    resolve_path,
    snapshot,
    special_file_reason,
)
from tools.builtin._path_field import (
    FileChange,
    PathField,
    Written,
    change_tool,
)
from tools.builtin._text import unified_diff
from tools.context import ToolUseContext
from tools.records import datarecord
from tools.result import ToolResult, ValidationError

__all__ = ["TOOLS", "NotebookEditInput", "NotebookEditOutput", "notebook_edit_tool"]

DESCRIPTION = """Replaces, inserts or deletes a cell of a Jupyter notebook (.ipynb file).

- notebook_path must be absolute; Read the notebook first.
- cell_id names the cell (as Read shows it). edit_mode "replace" (default) sets the cell's
  source; "insert" adds a new cell after cell_id (or at the start when cell_id is omitted) and
  needs cell_type; "delete" removes the cell."""


class NotebookEditInput(BaseModel):
    """Input of NotebookEdit."""

    model_config = ConfigDict(extra="forbid")

    notebook_path: str = Field(
        description="The absolute path to the Jupyter notebook file to edit (must be absolute)"
    )
    new_source: str = Field(description="The new source for the cell")
    cell_id: str | None = Field(
        default=None,
        description="The ID of the cell to edit. When inserting, the new cell goes after this "
        "cell, or at the beginning if not specified.",
    )
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None,
        description="The type of the cell (code or markdown). Required for edit_mode=insert; "
        "defaults to the current type for replace.",
    )
    edit_mode: Literal["replace", "insert", "delete"] | None = Field(
        default=None, description="The type of edit to make (replace, insert, delete)"
    )


class NotebookEditOutput(BaseModel):
    """What NotebookEdit did, for the model (message) and the TUI (diff of the file)."""

    notebook_path: str
    cell_id: str
    edit_mode: str
    message: str
    diff: str


@datarecord(frozen=True, slots=True)
class _Plan:
    path: Path
    before: str
    after: str
    mode: int
    cell_id: str
    message: str


def _cell_name(cell: Any, index: int) -> str:
    return str(cell.get("id") or f"cell-{index}")


def _find(cells: list[Any], cell_id: str) -> int | None:
    for i, cell in enumerate(cells):
        if cell.get("id") == cell_id or f"cell-{i}" == cell_id:
            return i
    return None


def _new_cell(nb: Any, kind: str, source: str, like: Any = None) -> Any:
    from nbformat import v4

    cell = v4.new_code_cell(source) if kind == "code" else v4.new_markdown_cell(source)
    if like is not None:
        cell.metadata = like.get("metadata", {})
        if "id" in like:
            cell["id"] = like["id"]
    if (nb.nbformat, nb.nbformat_minor) < (4, 5):
        cell.pop("id", None)  # ids are not allowed before nbformat 4.5
    return cell


def _plan(inp: NotebookEditInput, ctx: ToolUseContext) -> _Plan | str:
    import nbformat

    path = resolve_path(inp.notebook_path, ctx.cwd)
    reason = special_file_reason(path)
    if reason:
        return reason
    if not path.is_file():
        return missing_file_message(path, ctx.cwd)
    if path.suffix.lower() != ".ipynb":
        return "File must be a Jupyter notebook (.ipynb file). For other files use Edit."
    snap = snapshot(path)
    refusal = check_writable_state(path, ctx, snap)
    if refusal:
        return refusal
    before = snap.data.decode("utf-8", "replace")
    try:
        nb = nbformat.reads(before, as_version=4)
    except Exception as exc:  # any parse failure is a notebook the model cannot edit
        return f"Notebook is not valid JSON/nbformat: {type(exc).__name__}: {exc}"
    mode = inp.edit_mode or "replace"
    index = _cell_index(nb.cells, inp, mode)
    if isinstance(index, str):
        return index
    edited = _EDITS[mode](nb, index, inp)
    if isinstance(edited, str):
        return edited
    name, message = edited
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        return f"The edited notebook would be invalid: {str(exc).splitlines()[0]}"
    after = nbformat.writes(nb) + ("\n" if before.endswith("\n") else "")
    return _Plan(path, before, after, snap.mode, name, message)


def _cell_index(cells: list[Any], inp: NotebookEditInput, mode: str) -> int | str | None:
    """The index of the cell ``cell_id`` names (None: none named, inserting at the start), or
    the error."""
    if inp.cell_id is None:
        return None if mode == "insert" else f"cell_id is required for edit_mode={mode}."
    index = _find(cells, inp.cell_id)
    if index is None:
        known = ", ".join(_cell_name(c, i) for i, c in enumerate(cells[:20]))
        return f'Cell with ID "{inp.cell_id}" not found in notebook. Cells: {known}'
    return index


# Each edit changes ``nb`` in place: the edited cell's name and the message, or the error.
_Edited = tuple[str, str] | str


def _insert(nb: Any, index: int | None, inp: NotebookEditInput) -> _Edited:
    if inp.cell_type is None:
        return "cell_type is required when inserting a cell (code or markdown)."
    cell = _new_cell(nb, inp.cell_type, inp.new_source)
    position = 0 if index is None else index + 1
    nb.cells.insert(position, cell)
    name = _cell_name(cell, position)
    where = f"after {inp.cell_id}" if inp.cell_id else "at the start"
    return name, f"Inserted cell {name} {where} with {inp.new_source}"


def _delete(nb: Any, index: int | None, inp: NotebookEditInput) -> _Edited:
    assert index is not None
    name = _cell_name(nb.cells[index], index)
    del nb.cells[index]
    return name, f"Deleted cell {name}"


def _replace(nb: Any, index: int | None, inp: NotebookEditInput) -> _Edited:
    assert index is not None
    cells = nb.cells
    old = cells[index]
    kind = inp.cell_type or old.get("cell_type", "code")
    if kind != old.get("cell_type"):
        cells[index] = _new_cell(nb, kind, inp.new_source, like=old)
    else:
        old.source = inp.new_source
        if kind == "code":  # outputs belonged to the old source
            old.outputs = []
            old.execution_count = None
    name = _cell_name(cells[index], index)
    return name, f"Updated cell {name} with {inp.new_source}"


_EDITS: dict[str, Callable[[Any, int | None, NotebookEditInput], _Edited]] = {
    "insert": _insert,
    "delete": _delete,
    "replace": _replace,
}


def _apply(inp: NotebookEditInput, ctx: ToolUseContext) -> tuple[ToolResult, Written | None]:
    plan = _plan(inp, ctx)
    if isinstance(plan, str):
        return ToolResult(data=plan, is_error=True), None
    data = plan.after.encode("utf-8")
    mtime = atomic_write(plan.path, data, plan.mode)
    out = NotebookEditOutput(
        notebook_path=str(plan.path),
        cell_id=plan.cell_id,
        edit_mode=inp.edit_mode or "replace",
        message=plan.message,
        diff=unified_diff(str(plan.path), plan.before, plan.after),
    )
    return ToolResult(data=out), (plan.path, data, mtime)


def _check(inp: NotebookEditInput) -> ValidationError | None:
    if inp.edit_mode == "insert" and inp.cell_type is None:
        return ValidationError("cell_type is required when using edit_mode=insert.")
    return None


notebook_edit_tool = change_tool(
    name="NotebookEdit",
    input_model=NotebookEditInput,
    description=DESCRIPTION,
    search_hint="edit jupyter notebook cell",
    change=FileChange(
        field=PathField("notebook_path"),
        plan=_plan,
        apply=_apply,
        render_plan=lambda plan, _inp: unified_diff(str(plan.path), plan.before, plan.after),
        verb="edit",
        check=_check,
    ),
)

TOOLS = (notebook_edit_tool,)
