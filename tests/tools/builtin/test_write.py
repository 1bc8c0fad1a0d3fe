"""Write: create, overwrite after a read, refusals, format kept."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from permissions.types import ToolKind
from tests.tools.builtin.file_tools_support import content_text, make_ctx, run_tool
from tools.builtin.edit import edit_tool
from tools.builtin.read import read_tool
from tools.builtin.write import TOOLS, WriteOutput, write_tool
from tools.context import ToolUseContext

pytestmark = pytest.mark.timeout(30)


async def write(ctx: ToolUseContext, path: Path | str, content: str) -> tuple:
    result = await run_tool(write_tool, {"file_path": str(path), "content": content}, ctx)
    return result, content_text(write_tool, result)


def test_contract() -> None:
    assert TOOLS == (write_tool,)
    assert write_tool.permission_kind is ToolKind.EDIT
    inp = write_tool.input_model.model_validate({"file_path": "/a", "content": ""})
    assert not write_tool.is_read_only(inp) and not write_tool.is_concurrency_safe(inp)


async def test_create_with_parents_then_edit_without_read(tmp_path: Path) -> None:
    f = tmp_path / "a" / "b" / "new.txt"
    ctx = make_ctx(tmp_path)
    result, text = await write(ctx, f, "hello\n")
    assert not result.is_error
    assert text == f"File created successfully at: {f}"
    assert f.read_text() == "hello\n"
    assert isinstance(result.data, WriteOutput) and "+hello" in result.data.diff
    # Written counts as read: an Edit may follow directly.
    edited = await run_tool(
        edit_tool, {"file_path": str(f), "old_string": "hello", "new_string": "bye"}, ctx
    )
    assert not edited.is_error, edited.data


async def test_overwrite_requires_read_and_unchanged(tmp_path: Path) -> None:
    f = tmp_path / "x.sh"
    f.write_text("old\n")
    f.chmod(0o755)
    ctx = make_ctx(tmp_path)
    result, text = await write(ctx, f, "new\n")
    assert result.is_error and text.startswith("File has not been read yet.")
    assert f.read_text() == "old\n"
    await run_tool(read_tool, {"file_path": str(f)}, ctx)
    result, text = await write(ctx, f, "new\n")
    assert not result.is_error
    assert text == f"The file {f} has been updated."
    assert f.read_text() == "new\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o755
    assert "-old\n+new\n" in result.data.diff
    f.write_text("someone else\n")
    import os

    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))
    result, text = await write(ctx, f, "mine\n")
    assert result.is_error and text.startswith("File has been modified since read")


async def test_content_written_as_given_encoding_kept(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes("crlf\r\nçà\r\n".encode("latin-1"))
    ctx = make_ctx(tmp_path)
    await run_tool(read_tool, {"file_path": str(f)}, ctx)
    result, _ = await write(ctx, f, "lf only\nété\n")
    assert not result.is_error
    assert f.read_bytes() == "lf only\nété\n".encode("latin-1")


async def test_refusals(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result, text = await write(ctx, "rel.txt", "x")
    assert result.is_error and "absolute path" in text
    result, text = await write(ctx, tmp_path, "x")
    assert result.is_error and "directory" in text


async def test_prepare_prompt_preview(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    assert write_tool.prepare_prompt is not None
    inp = write_tool.input_model.model_validate(
        {"file_path": str(tmp_path / "n.txt"), "content": "l1\nl2\n"}
    )
    preview, _ = await write_tool.prepare_prompt(inp, ctx)
    assert preview is not None and preview.startswith("New file") and "l1\nl2" in preview
    assert not (tmp_path / "n.txt").exists()
