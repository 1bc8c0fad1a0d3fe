"""NotebookEdit: real notebooks written with nbformat, read with Read, edited, re-validated."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import nbformat
import pytest

from permissions.types import ToolKind
from tests.tools.builtin.file_tools_support import content_text, make_ctx, run_tool
from tools.builtin.notebook_edit import TOOLS, notebook_edit_tool
from tools.builtin.read import read_tool
from tools.context import ToolUseContext
from tools.result import ToolResult

pytestmark = pytest.mark.timeout(30)


def make_notebook(path: Path, minor: int = 5) -> tuple[str, str]:
    nb = nbformat.v4.new_notebook()
    md = nbformat.v4.new_markdown_cell("# Title")
    code = nbformat.v4.new_code_cell("x = 1\nx")
    code.execution_count = 3
    code.outputs = [
        nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=3)
    ]
    nb.cells = [md, code]
    if minor < 5:
        nb.nbformat_minor = minor
        for cell in nb.cells:
            cell.pop("id")
    path.write_text(nbformat.writes(nb))
    return md.get("id", "cell-0"), code.get("id", "cell-1")


async def edit(ctx: ToolUseContext, path: Path, **raw: Any) -> tuple[ToolResult, str]:
    result = await run_tool(notebook_edit_tool, {"notebook_path": str(path), **raw}, ctx)
    return result, content_text(notebook_edit_tool, result)


async def read_ctx(tmp_path: Path, path: Path) -> ToolUseContext:
    ctx = make_ctx(tmp_path)
    result = await run_tool(read_tool, {"file_path": str(path)}, ctx)
    assert not result.is_error
    return ctx


def test_contract() -> None:
    assert TOOLS == (notebook_edit_tool,)
    assert notebook_edit_tool.permission_kind is ToolKind.EDIT
    inp = notebook_edit_tool.input_model.model_validate(
        {"notebook_path": "/a.ipynb", "new_source": ""}
    )
    assert not notebook_edit_tool.is_concurrency_safe(inp)


async def test_replace_clears_outputs(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    _, code_id = make_notebook(path)
    path.chmod(0o640)
    ctx = await read_ctx(tmp_path, path)
    result, text = await edit(ctx, path, cell_id=code_id, new_source="y = 2")
    assert not result.is_error, text
    assert text == f"Updated cell {code_id} with y = 2"
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert nb.cells[1].source == "y = 2"
    assert nb.cells[1].outputs == [] and nb.cells[1].execution_count is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    # consecutive edits need no new Read; changing the type works too
    result, text = await edit(
        ctx, path, cell_id=code_id, new_source="now text", cell_type="markdown"
    )
    assert not result.is_error, text
    nb = nbformat.read(str(path), as_version=4)
    assert nb.cells[1].cell_type == "markdown" and nb.cells[1].id == code_id


async def test_insert_after_and_at_start(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    md_id, _code_id = make_notebook(path)
    ctx = await read_ctx(tmp_path, path)
    result, text = await edit(
        ctx, path, cell_id=md_id, new_source="print(1)", cell_type="code", edit_mode="insert"
    )
    assert not result.is_error, text
    result, text = await edit(
        ctx, path, new_source="intro", cell_type="markdown", edit_mode="insert"
    )
    assert not result.is_error, text
    nb = nbformat.read(str(path), as_version=4)
    assert [c.source for c in nb.cells] == ["intro", "# Title", "print(1)", "x = 1\nx"]
    assert len({c.id for c in nb.cells}) == 4
    result, text = await edit(ctx, path, new_source="x", edit_mode="insert")
    assert result.is_error and "cell_type is required" in text


async def test_delete_and_unknown_cell(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    md_id, code_id = make_notebook(path)
    ctx = await read_ctx(tmp_path, path)
    result, text = await edit(ctx, path, cell_id=md_id, new_source="", edit_mode="delete")
    assert not result.is_error and text == f"Deleted cell {md_id}"
    nb = nbformat.read(str(path), as_version=4)
    assert [c.id for c in nb.cells] == [code_id]
    result, text = await edit(ctx, path, cell_id="nope", new_source="x")
    assert result.is_error and 'Cell with ID "nope" not found' in text


async def test_old_notebook_without_ids_uses_index_names(tmp_path: Path) -> None:
    path = tmp_path / "old.ipynb"
    make_notebook(path, minor=4)
    ctx = await read_ctx(tmp_path, path)
    listing = content_text(read_tool, await run_tool(read_tool, {"file_path": str(path)}, ctx))
    assert '<cell id="cell-1" type="code"' in listing
    result, text = await edit(ctx, path, cell_id="cell-1", new_source="z = 9")
    assert not result.is_error, text
    result, text = await edit(
        ctx, path, cell_id="cell-0", new_source="new", cell_type="code", edit_mode="insert"
    )
    assert not result.is_error, text
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["# Title", "new", "z = 9"]


async def test_requires_read_and_refuses_stale(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    _, code_id = make_notebook(path)
    result, text = await edit(make_ctx(tmp_path), path, cell_id=code_id, new_source="q")
    assert result.is_error and text.startswith("File has not been read yet.")
    ctx = await read_ctx(tmp_path, path)
    make_notebook(path)  # rewritten by someone else: new ids, new mtime
    result, text = await edit(ctx, path, cell_id=code_id, new_source="q")
    assert result.is_error and text.startswith("File has been modified since read")


async def test_not_a_notebook_and_relative(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x")
    ctx = await read_ctx(tmp_path, f)
    result, text = await edit(ctx, f, cell_id="cell-0", new_source="y")
    assert result.is_error and ".ipynb" in text
    result, text = await edit(ctx, Path("rel.ipynb"), new_source="y")
    assert result.is_error and "absolute path" in text
