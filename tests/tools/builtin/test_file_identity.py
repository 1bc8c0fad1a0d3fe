"""Edit and Write change a file's content, not what the file is: its other hard links, its
owner and group, its mode (read-only bits too) stay."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.tools.builtin.file_tools_support import make_ctx, run_tool
from tools.builtin.edit import edit_tool
from tools.builtin.read import read_tool
from tools.builtin.write import write_tool

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")


async def _change(path: Path, how: str) -> None:
    ctx = make_ctx(path.parent)
    await run_tool(read_tool, {"file_path": str(path)}, ctx)
    raw: dict[str, Any]
    if how == "edit":
        raw = {"file_path": str(path), "old_string": "alpha", "new_string": "beta"}
        result = await run_tool(edit_tool, raw, ctx)
    else:
        result = await run_tool(write_tool, {"file_path": str(path), "content": "beta\n"}, ctx)
    assert not result.is_error, result.data


@pytest.mark.parametrize("how", ["edit", "write"])
async def test_hard_links_keep_sharing_the_content(tmp_path: Path, how: str) -> None:
    path = tmp_path / "a.txt"
    path.write_text("alpha\n")
    other = tmp_path / "b.txt"
    os.link(path, other)
    inode = path.stat().st_ino
    await _change(path, how)
    assert other.read_text() == "beta\n" and path.read_text() == "beta\n"
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2


@as_root
@pytest.mark.parametrize("how", ["edit", "write"])
async def test_another_users_file_stays_theirs(tmp_path: Path, how: str) -> None:
    path = tmp_path / "theirs.txt"
    path.write_text("alpha\n")
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o640)
    await _change(path, how)
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert path.read_text() == "beta\n"


@as_root
async def test_the_group_is_kept_and_the_write_stays_atomic(tmp_path: Path) -> None:
    path = tmp_path / "ours.txt"
    path.write_text("alpha\n")
    os.chown(path, os.geteuid(), NOBODY)
    inode = path.stat().st_ino
    await _change(path, "edit")
    st = path.stat()
    assert st.st_gid == NOBODY and st.st_uid == os.geteuid()
    assert st.st_ino != inode  # a plain file of ours is still replaced by rename


@pytest.mark.parametrize("how", ["edit", "write"])
async def test_read_only_bits_stay(tmp_path: Path, how: str) -> None:
    path = tmp_path / "ro.txt"
    path.write_text("alpha\n")
    path.chmod(0o444)
    await _change(path, how)
    assert stat.S_IMODE(path.stat().st_mode) == 0o444 and path.read_text() == "beta\n"


async def test_through_a_symlink_to_a_linked_file(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("alpha\n")
    os.link(real, tmp_path / "twin.txt")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    await _change(link, "edit")
    assert link.is_symlink() and (tmp_path / "twin.txt").read_text() == "beta\n"
