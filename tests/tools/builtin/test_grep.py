"""Grep: real ripgrep over real trees (a real git repo for .gitignore)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from permissions.types import ToolKind
from tests.tools.builtin.file_tools_support import content_text, make_ctx, run_tool
from tools.builtin._grep_format import split_globs
from tools.builtin.grep import TOOLS, grep_tool
from tools.result import ToolResult

pytestmark = pytest.mark.timeout(30)


def write(path: Path, text: str, mtime: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def grep(cwd: Path, **raw: object) -> tuple[str, bool]:
    result = await run_tool(grep_tool, dict(raw), make_ctx(cwd))
    return content_text(grep_tool, result), result.is_error


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write(tmp_path / "a.py", "import os\nTODO: fix\nprint('x')\n", 1_000_000)
    write(tmp_path / "src" / "b.py", "x = 1\ntodo later\ny = 2\nz = 3\nTODO again\n", 3_000_000)
    write(tmp_path / "src" / "c.js", "// TODO js\n", 2_000_000)
    write(tmp_path / ".hidden" / "h.txt", "TODO hidden\n", 500_000)
    return tmp_path


def test_contract() -> None:
    assert TOOLS == (grep_tool,)
    assert grep_tool.max_result_size_chars == 20_000
    assert grep_tool.permission_kind is ToolKind.READ
    props = grep_tool.input_schema()["properties"]
    assert {"-i", "-n", "-A", "-B", "-C", "context", "head_limit", "offset"} <= set(props)
    inp = grep_tool.input_model.model_validate({"pattern": "x", "-i": True, "-A": 2})
    assert inp.case_insensitive and inp.after == 2
    assert grep_tool.is_read_only(inp) and grep_tool.is_concurrency_safe(inp)


def test_split_globs() -> None:
    assert split_globs("*.py,*.js *.{ts,tsx}") == ["*.py", "*.js", "*.{ts,tsx}"]


async def test_files_with_matches_default_sorted_by_mtime(tree: Path) -> None:
    text, err = await grep(tree, pattern="TODO")
    assert not err
    assert text.splitlines() == ["Found 4 files", "src/b.py", "src/c.js", "a.py", ".hidden/h.txt"]


async def test_content_mode_line_numbers_and_case(tree: Path) -> None:
    text, _ = await grep(tree, pattern="todo", output_mode="content")
    assert text.splitlines() == ["src/b.py:2:todo later"]
    text, _ = await grep(tree, pattern="todo", output_mode="content", **{"-i": True})
    assert text.splitlines() == [
        ".hidden/h.txt:1:TODO hidden",
        "a.py:2:TODO: fix",
        "src/b.py:2:todo later",
        "src/b.py:5:TODO again",
        "src/c.js:1:// TODO js",
    ]
    text, _ = await grep(tree, pattern="todo", output_mode="content", **{"-n": False})
    assert text == "src/b.py:todo later"


async def test_context_flags(tree: Path) -> None:
    path = str(tree / "src" / "b.py")
    text, _ = await grep(tree, pattern="^todo", output_mode="content", path=path, **{"-A": 1})
    assert text.splitlines() == ["src/b.py:2:todo later", "src/b.py-3-y = 2"]
    text, _ = await grep(tree, pattern="later", output_mode="content", path=path, **{"-B": 1})
    assert text.splitlines() == ["src/b.py-1-x = 1", "src/b.py:2:todo later"]
    text, _ = await grep(tree, pattern="x = 1|again", output_mode="content", path=path, context=1)
    assert text.splitlines() == [
        "src/b.py:1:x = 1",
        "src/b.py-2-todo later",
        "--",
        "src/b.py-4-z = 3",
        "src/b.py:5:TODO again",
    ]
    text, _ = await grep(tree, pattern="x = 1", output_mode="content", path=path, **{"-C": 1})
    assert text.splitlines() == ["src/b.py:1:x = 1", "src/b.py-2-todo later"]


async def test_count_mode(tree: Path) -> None:
    text, _ = await grep(tree, pattern="TODO", output_mode="count")
    lines = text.splitlines()
    assert lines[:4] == [".hidden/h.txt:1", "a.py:1", "src/b.py:1", "src/c.js:1"]
    assert lines[-1] == "Found 4 matching lines across 4 files."


async def test_glob_and_type_filters(tree: Path) -> None:
    text, _ = await grep(tree, pattern="TODO", glob="*.js")
    assert text.splitlines() == ["Found 1 file", "src/c.js"]
    text, _ = await grep(tree, pattern="TODO", glob="*.js,*.txt")
    assert set(text.splitlines()[1:]) == {"src/c.js", ".hidden/h.txt"}
    text, _ = await grep(tree, pattern="TODO", type="py")
    assert text.splitlines() == ["Found 2 files", "src/b.py", "a.py"]
    text, err = await grep(tree, pattern="TODO", type="nosuchtype")
    assert err and "nosuchtype" in text


async def test_multiline(tree: Path) -> None:
    text, _ = await grep(tree, pattern=r"x = 1.todo", output_mode="content")
    assert text == "No matches found"
    text, _ = await grep(tree, pattern=r"x = 1.todo", output_mode="content", multiline=True)
    assert text.splitlines() == ["src/b.py:1:x = 1", "src/b.py:2:todo later"]


async def test_only_matching(tree: Path) -> None:
    text, _ = await grep(
        tree, pattern=r"TODO \w+", output_mode="content", path=str(tree / "src"), **{"-o": True}
    )
    assert text.splitlines() == ["src/b.py:5:TODO again", "src/c.js:1:TODO js"]


async def test_pagination_pages_are_disjoint_and_complete(tmp_path: Path) -> None:
    for i in range(30):
        write(tmp_path / f"d{i % 3}" / f"f{i:02d}.txt", "needle\n" * 3, 1_000_000 + i)
    text, _ = await grep(tmp_path, pattern="needle", output_mode="content")
    everything = text.splitlines()
    assert len(everything) == 90
    page1, _ = await grep(tmp_path, pattern="needle", output_mode="content", head_limit=50)
    page2, _ = await grep(
        tmp_path, pattern="needle", output_mode="content", head_limit=50, offset=50
    )
    assert page1.endswith("[Showing results with pagination = limit: 50, offset: 0]")
    assert page2.endswith("[Showing results with pagination = limit: 50, offset: 50]")
    lines1 = page1.split("\n\n[Showing")[0].splitlines()
    lines2 = page2.split("\n\n[Showing")[0].splitlines()
    assert len(lines1) == 50 and len(lines2) == 40
    assert not set(lines1) & set(lines2)
    assert lines1 + lines2 == everything
    files1, _ = await grep(tmp_path, pattern="needle", head_limit=20)
    files2, _ = await grep(tmp_path, pattern="needle", head_limit=20, offset=20)
    names1 = files1.splitlines()[1:21]
    names2 = files2.split("\n\n")[0].splitlines()[1:]
    assert len(names1) == 20 and len(names2) == 10 and not set(names1) & set(names2)
    assert names1[0] == "d2/f29.txt"  # newest first
    unlimited, _ = await grep(tmp_path, pattern="needle", output_mode="content", head_limit=0)
    assert "[Showing" not in unlimited and len(unlimited.splitlines()) == 90


async def test_gitignore_respected_and_vcs_excluded(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / ".gitignore", "build/\n*.log\n")
    write(tmp_path / "build" / "out.txt", "secret\n")
    write(tmp_path / "debug.log", "secret\n")
    write(tmp_path / "keep.txt", "secret\n")
    write(tmp_path / ".git" / "secret-note", "secret\n")
    text, _ = await grep(tmp_path, pattern="secret")
    assert text.splitlines() == ["Found 1 file", "keep.txt"]


async def test_bad_regex_error_surfaced(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "x\n")
    text, err = await grep(tmp_path, pattern="(unclosed")
    assert err and "regex parse error" in text


async def test_pattern_starting_with_dash(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "run --verbose now\n")
    text, err = await grep(tmp_path, pattern="--verbose", output_mode="content")
    assert not err and text == "a.txt:1:run --verbose now"


async def test_path_outside_cwd_is_absolute_and_missing_path(tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / "x.txt", "hello\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    text, _ = await grep(cwd, pattern="hello", path=str(other))
    assert text.splitlines() == ["Found 1 file", str(other / "x.txt")]
    text, err = await grep(cwd, pattern="hello", path=str(tmp_path / "nope"))
    assert err and "does not exist" in text


async def test_long_lines_are_omitted(tmp_path: Path) -> None:
    write(tmp_path / "min.js", "a" * 800 + "needle\nshort needle\n")
    text, _ = await grep(tmp_path, pattern="needle", output_mode="content")
    assert text.splitlines() == [
        "min.js:1:[Omitted long matching line]",
        "min.js:2:short needle",
    ]


async def test_progress_and_abort(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "hit\n")
    ctx = make_ctx(tmp_path)
    inp = grep_tool.input_model.model_validate({"pattern": "hit", "output_mode": "content"})
    seen: list[object] = []
    result = await grep_tool.call(inp, ctx, seen.append)
    assert not result.is_error and seen and seen[-1] == {"tool": "Grep", "lines": 1}
    ctx.abort.abort()
    result = await asyncio.wait_for(grep_tool.call(inp, ctx, seen.append), 5)
    assert result.is_error and "interrupted" in str(result.data)


async def test_abort_kills_a_running_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)  # rg blocks opening it: a search that would never end
    # Grep refuses a FIFO path up front; let this one through to have an rg that never ends.
    monkeypatch.setattr("tools.builtin.grep.special_file_reason", lambda _path: None)
    ctx = make_ctx(tmp_path)
    inp = grep_tool.input_model.model_validate({"pattern": "x", "path": str(fifo)})

    async def search() -> ToolResult:
        return await grep_tool.call(inp, ctx, lambda _p: None)

    task = asyncio.create_task(search())
    await asyncio.sleep(0.3)
    assert not task.done()
    before = {p for p in os.listdir("/proc") if p.isdigit()}
    ctx.abort.abort()
    result = await asyncio.wait_for(task, 5)
    assert result.is_error and "interrupted" in str(result.data)
    for pid in {p for p in os.listdir("/proc") if p.isdigit()} & before:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        assert str(fifo).encode() not in cmd, "rg still running"


async def test_a_fifo_or_device_path_is_refused_at_once(tree: Path) -> None:
    fifo = tree / "pipe"
    os.mkfifo(fifo)  # ripgrep would block forever opening it
    out, is_error = await asyncio.wait_for(grep(tree, pattern="x", path=str(fifo)), 10)
    assert is_error and "FIFO" in out
    out, is_error = await asyncio.wait_for(grep(tree, pattern="x", path="/dev/zero"), 10)
    assert is_error and "device" in out


async def test_a_fifo_inside_the_tree_is_skipped(tree: Path) -> None:
    os.mkfifo(tree / "src" / "pipe")
    out, is_error = await asyncio.wait_for(grep(tree, pattern="TODO"), 10)
    assert not is_error and "b.py" in out and "pipe" not in out
