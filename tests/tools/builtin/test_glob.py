"""Glob: real trees in tmp_path, real ripgrep (and the pure-Python walk it falls back to)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from permissions.types import ToolKind
from tests.tools.builtin.file_tools_support import content_text, make_ctx, run_tool
from tools.builtin.glob import TOOLS, TRUNCATED_NOTE, glob_tool, walk_glob

pytestmark = pytest.mark.timeout(30)


def touch(path: Path, mtime: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))
    return path


async def glob(tmp_path: Path, **raw: object) -> tuple[str, bool]:
    result = await run_tool(glob_tool, dict(raw), make_ctx(tmp_path))
    return content_text(glob_tool, result), result.is_error


def test_contract() -> None:
    assert TOOLS == (glob_tool,)
    inp = glob_tool.input_model.model_validate({"pattern": "*.py"})
    assert glob_tool.is_read_only(inp) and glob_tool.is_concurrency_safe(inp)
    assert glob_tool.permission_kind is ToolKind.READ
    assert glob_tool.permission_paths(inp, make_ctx(Path("/tmp"))) == (Path("/tmp"),)


async def test_mtime_order_newest_first_ties_by_name(tmp_path: Path) -> None:
    touch(tmp_path / "old.py", 1_000_000)
    touch(tmp_path / "src" / "new.py", 3_000_000)
    touch(tmp_path / "src" / "deep" / "b_mid.py", 2_000_000)
    touch(tmp_path / "src" / "deep" / "a_mid.py", 2_000_000)
    touch(tmp_path / "notes.txt", 4_000_000)
    text, err = await glob(tmp_path, pattern="**/*.py")
    assert not err
    assert text.splitlines() == [
        str(tmp_path / "src" / "new.py"),
        str(tmp_path / "src" / "deep" / "a_mid.py"),
        str(tmp_path / "src" / "deep" / "b_mid.py"),
        str(tmp_path / "old.py"),
    ]


async def test_cap_100_with_note(tmp_path: Path) -> None:
    for i in range(130):
        touch(tmp_path / f"f{i:03d}.txt", 1_000_000 + i)
    text, _ = await glob(tmp_path, pattern="*.txt")
    lines = text.splitlines()
    assert len(lines) == 101 and lines[-1] == TRUNCATED_NOTE
    assert lines[0] == str(tmp_path / "f129.txt")


async def test_no_gitignore_vcs_skipped_hidden_included(tmp_path: Path) -> None:
    touch(tmp_path / ".gitignore", 1).write_text("ignored.py\n")
    touch(tmp_path / "ignored.py", 2)
    touch(tmp_path / ".git" / "hooks" / "x.py", 3)
    touch(tmp_path / ".hg" / "y.py", 3)
    touch(tmp_path / ".hidden" / "z.py", 4)
    text, _ = await glob(tmp_path, pattern="**/*.py")
    assert set(text.splitlines()) == {
        str(tmp_path / "ignored.py"),
        str(tmp_path / ".hidden" / "z.py"),
    }


async def test_path_argument_and_errors(tmp_path: Path) -> None:
    touch(tmp_path / "sub" / "a.md", 5)
    touch(tmp_path / "b.md", 6)
    text, _ = await glob(tmp_path, pattern="*.md", path=str(tmp_path / "sub"))
    assert text == str(tmp_path / "sub" / "a.md")
    text, _ = await glob(tmp_path, pattern=str(tmp_path / "sub" / "*.md"))  # absolute pattern
    assert text == str(tmp_path / "sub" / "a.md")
    text, _ = await glob(tmp_path, pattern="*.nothing")
    assert text == "No files found"
    text, err = await glob(tmp_path, pattern="*", path=str(tmp_path / "missing"))
    assert err and "does not exist" in text
    text, err = await glob(tmp_path, pattern="*", path=str(tmp_path / "b.md"))
    assert err and "not a directory" in text


def test_walk_fallback_matches_ripgrep_semantics(tmp_path: Path) -> None:
    for rel in ["a.py", "src/b.py", "src/sub/c.py", ".git/d.py", ".hidden/e.py", "src/x.txt"]:
        touch(tmp_path / rel, 1)
    cases = {
        "*.py": {"a.py", "src/b.py", "src/sub/c.py", ".hidden/e.py"},
        "src/*.py": {"src/b.py"},
        "src/**/*.py": {"src/b.py", "src/sub/c.py"},
        "/src/*.py": {"src/b.py"},
        "*.{py,txt}": {"a.py", "src/b.py", "src/sub/c.py", ".hidden/e.py", "src/x.txt"},
        "src/[bx].*": {"src/b.py", "src/x.txt"},
    }
    for pattern, expected in cases.items():
        assert set(walk_glob(tmp_path, pattern)) == expected, pattern


async def test_a_fifo_or_device_path_is_refused_at_once(tmp_path: Path) -> None:
    import asyncio

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out, is_error = await asyncio.wait_for(glob(tmp_path, pattern="*", path=str(fifo)), 10)
    assert is_error and "not a directory" in out
    out, is_error = await asyncio.wait_for(glob(tmp_path, pattern="*", path="/dev/null"), 10)
    assert is_error and "not a directory" in out
    touch(tmp_path / "a.txt", 1_000_000)  # a FIFO in the tree is listed by name, never opened
    out, is_error = await asyncio.wait_for(glob(tmp_path, pattern="*"), 10)
    assert not is_error and "a.txt" in out


@pytest.mark.parametrize("with_rg", [True, False])
async def test_names_that_are_not_utf8_are_listed_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_rg: bool
) -> None:
    if not with_rg:
        monkeypatch.setattr("tools.builtin.glob.find_rg", lambda: None)
    root = os.fsencode(tmp_path)
    for name, mtime in ((b"caf\xe9.txt", 3), (b"ok.txt", 2), (b"\xff\xfe.txt", 1)):
        fd = os.open(root + b"/" + name, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        os.utime(root + b"/" + name, (mtime * 1_000_000, mtime * 1_000_000))
    text, err = await glob(tmp_path, pattern="*.txt")
    assert not err
    assert text.splitlines() == [
        f"{tmp_path}/caf\\xe9.txt",
        f"{tmp_path}/ok.txt",
        f"{tmp_path}/\\xff\\xfe.txt",
    ]
    text.encode("utf-8")  # plain text the API and the transcript take as it is
