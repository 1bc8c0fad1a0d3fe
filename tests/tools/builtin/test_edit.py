"""Edit: real files, real reads through the Read tool, then edits."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from permissions.types import ToolKind
from tests.tools.builtin.file_tools_support import content_text, make_ctx, run_tool
from tools.builtin.edit import TOOLS, EditOutput, edit_tool
from tools.builtin.read import read_tool
from tools.context import ToolUseContext

pytestmark = pytest.mark.timeout(30)


async def read_then(ctx: ToolUseContext, path: Path, **read_args: object) -> None:
    result = await run_tool(read_tool, {"file_path": str(path), **read_args}, ctx)
    assert not result.is_error, result.data


async def edit(ctx: ToolUseContext, path: Path, old: str, new: str, **kw: object) -> tuple:
    result = await run_tool(
        edit_tool, {"file_path": str(path), "old_string": old, "new_string": new, **kw}, ctx
    )
    return result, content_text(edit_tool, result)


def test_contract() -> None:
    assert TOOLS == (edit_tool,)
    assert edit_tool.permission_kind is ToolKind.EDIT
    inp = edit_tool.input_model.model_validate(
        {"file_path": "/a", "old_string": "a", "new_string": "b"}
    )
    assert not edit_tool.is_read_only(inp) and not edit_tool.is_concurrency_safe(inp)
    assert edit_tool.input_schema()["required"] == ["file_path", "old_string", "new_string"]


async def test_simple_edit_snippet_diff_and_consecutive_edits(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("".join(f"line{i}\n" for i in range(1, 21)))
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    result, text = await edit(ctx, f, "line10\n", "ten\n")
    assert not result.is_error, text
    assert f.read_text().splitlines()[9] == "ten"
    assert "has been updated" in text
    assert "     6\tline6\n" in text and "    10\tten\n" in text and "    14\tline14" in text
    assert isinstance(result.data, EditOutput)
    assert "-line10\n+ten\n" in result.data.diff
    assert result.data.diff.startswith(f"--- {f}\n+++ {f}\n@@")
    # A second edit needs no new Read: the state was updated after the write.
    result, text = await edit(ctx, f, "line11", "eleven")
    assert not result.is_error, text
    assert "eleven" in f.read_text()


async def test_validation(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    result, text = await edit(ctx, tmp_path / "a", "same", "same")
    assert result.is_error and "exactly the same" in text
    result, text = await edit(ctx, Path("rel.txt"), "a", "b")
    assert result.is_error and "absolute path" in text


async def test_edit_without_read_refused(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("hello\n")
    result, text = await edit(make_ctx(tmp_path), f, "hello", "bye")
    assert result.is_error
    assert text == "File has not been read yet. Read it first before writing to it."
    assert f.read_text() == "hello\n"


async def test_partial_read_does_not_count(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("".join(f"{i:05d} " + "y" * 93 + "\n" for i in range(1500)))
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)  # PARTIAL view
    result, text = await edit(ctx, f, "00001 ", "first ")
    assert result.is_error and text.startswith("File has not been read yet.")
    await read_then(ctx, f, offset=1, limit=10)  # an explicit range counts
    result, text = await edit(ctx, f, "00001 ", "first ")
    assert not result.is_error, text


async def test_modified_since_read_refused_but_touch_is_fine(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("alpha\n")
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # touched, same content
    result, text = await edit(ctx, f, "alpha", "beta")
    assert not result.is_error, text
    f.write_text("changed by someone\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 9_000_000_000))
    result, text = await edit(ctx, f, "changed", "x")
    assert result.is_error
    assert text == (
        "File has been modified since read, either by the user or by a linter. "
        "Read it again before attempting to write it."
    )
    assert f.read_text() == "changed by someone\n"


async def test_crlf_preserved(tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    result, text = await edit(ctx, f, "first\nsecond", "uno\ndos\nmore")
    assert not result.is_error, text
    assert f.read_bytes() == b"uno\r\ndos\r\nmore\r\nthird\r\n"


async def test_latin1_bom_and_mode_preserved(tmp_path: Path) -> None:
    f = tmp_path / "latin.txt"
    f.write_bytes("café = 1\n".encode("latin-1"))
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    result, text = await edit(ctx, f, "= 1", "= 2 # déjà")
    assert not result.is_error, text
    assert f.read_bytes() == "café = 2 # déjà\n".encode("latin-1")

    g = tmp_path / "bom.sh"
    g.write_bytes(b"\xef\xbb\xbfecho hi\n")
    g.chmod(0o755)
    await read_then(ctx, g)
    result, text = await edit(ctx, g, "hi", "there")
    assert not result.is_error, text
    assert g.read_bytes() == b"\xef\xbb\xbfecho there\n"
    assert stat.S_IMODE(g.stat().st_mode) == 0o755
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


async def test_symlink_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("v1\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    ctx = make_ctx(tmp_path)
    await read_then(ctx, link)
    result, text = await edit(ctx, target, "v1", "v2")  # read via the link counts
    assert not result.is_error, text
    assert link.is_symlink() and target.read_text() == "v2\n"


async def test_curly_quote_fuzzy_edit(tmp_path: Path) -> None:
    f = tmp_path / "doc.md"
    f.write_text("He said “hello” and it’s fine.\nNext line.\n")
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    result, text = await edit(ctx, f, 'said "hello" and it\'s', 'said "goodbye" and it\'s')
    assert not result.is_error, text
    assert f.read_text() == "He said “goodbye” and it’s fine.\nNext line.\n"
    assert result.data.fuzzy


async def test_trailing_whitespace_fuzzy_edit(tmp_path: Path) -> None:
    f = tmp_path / "t.py"
    f.write_text("def f():   \n    return 1  \nprint(f())\n")
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    result, text = await edit(ctx, f, "def f():\n    return 1\n", "def f():\n    return 2\n")
    assert not result.is_error, text
    assert f.read_text() == "def f():\n    return 2\nprint(f())\n"


async def test_not_unique_replace_all_and_not_found(tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_text("foo\nbar foo\nfoo\n")
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    result, text = await edit(ctx, f, "foo", "baz")
    assert result.is_error
    assert text.startswith("Found 3 matches of the string to replace, but replace_all is false")
    result, text = await edit(ctx, f, "foo", "baz", replace_all=True)
    assert not result.is_error, text
    assert f.read_text() == "baz\nbar baz\nbaz\n"
    assert result.data.replacements == 3
    result, text = await edit(ctx, f, "nowhere", "x")
    assert result.is_error and "String to replace not found" in text


async def test_create_with_empty_old_string(tmp_path: Path) -> None:
    f = tmp_path / "new" / "dir" / "file.txt"
    ctx = make_ctx(tmp_path)
    result, text = await edit(ctx, f, "", "fresh\n")
    assert not result.is_error, text
    assert f.read_text() == "fresh\n" and "created" in text
    result, text = await edit(ctx, f, "", "again\n")
    assert result.is_error and "already exists" in text
    result, text = await edit(ctx, tmp_path / "missing.txt", "x", "y")
    assert result.is_error and "does not exist" in text


async def test_prepare_prompt_returns_diff_without_writing(tmp_path: Path) -> None:
    f = tmp_path / "p.txt"
    f.write_text("a\nb\n")
    ctx = make_ctx(tmp_path)
    await read_then(ctx, f)
    assert edit_tool.prepare_prompt is not None
    inp = edit_tool.input_model.model_validate(
        {"file_path": str(f), "old_string": "b", "new_string": "c"}
    )
    preview, replacement = await edit_tool.prepare_prompt(inp, ctx)
    assert preview is not None and "-b\n+c\n" in preview and replacement is None
    assert f.read_text() == "a\nb\n"
