"""The bounded stat scan Bash changes are found with, and the pre-image cache."""

from __future__ import annotations

import os
from pathlib import Path

from agent_cli.loop.fs_snapshot import PreimageCache, diff_scans, scan


def _tree(root: Path) -> None:
    for rel in (
        "src/a.py",
        "src/deep/b.py",
        "node_modules/x/index.js",
        ".git/HEAD",
        "logs/run.log",
        "out.tmp",
        "venv2/lib/site.py",
    ):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)
    (root / "venv2" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / ".gitignore").write_text("# comment\nlogs/\n*.tmp\n/anchored\n!keep\n")
    os.symlink(root / "src", root / "link-to-src")


def test_scan_skips_dependency_trees_ignored_names_venvs_and_symlinks(tmp_path: Path) -> None:
    _tree(tmp_path)
    found = scan([tmp_path, tmp_path / "src"])  # an overlapping root is scanned once
    names = sorted(os.path.relpath(p, tmp_path) for p in found.files)
    assert names == [".gitignore", "src/a.py", "src/deep/b.py"]
    assert found.complete


def test_a_scan_over_its_bound_says_so_and_invents_no_creations(tmp_path: Path) -> None:
    for i in range(10):
        (tmp_path / f"f{i}").write_text("x")
    before = scan([tmp_path], max_files=5)
    assert not before.complete and len(before.files) == 5
    (tmp_path / "new").write_text("y")
    after = scan([tmp_path], max_files=5)
    created, _, deleted = diff_scans(before, after)
    assert created == [] and deleted == []  # unreached files are not news


def test_diff_finds_created_changed_and_deleted(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("1")
    (tmp_path / "change").write_text("1")
    (tmp_path / "gone").write_text("1")
    before = scan([tmp_path])
    (tmp_path / "change").write_text("22")
    (tmp_path / "gone").unlink()
    (tmp_path / "made").write_text("1")
    created, changed, deleted = diff_scans(before, scan([tmp_path]))
    assert [Path(p).name for p in created] == ["made"]
    assert [Path(p).name for p in changed] == ["change"]
    assert [Path(p).name for p in deleted] == ["gone"]


def test_preimage_cache_reads_each_version_once_and_stays_bounded(tmp_path: Path) -> None:
    for i in range(4):
        (tmp_path / f"f{i}").write_bytes(bytes([65 + i]) * 100)
    (tmp_path / "big").write_bytes(b"b" * 5000)
    cache = PreimageCache(max_bytes=300, max_file=1000, read_per_fill=10_000)
    first = scan([tmp_path])
    cache.fill(first.files)
    kept = [p for p, st in first.files.items() if cache.get(p, st) is not None]
    assert len(kept) == 3  # 4 x 100 bytes > 300: the least recently seen went
    assert cache.get(str(tmp_path / "big"), first.files[str(tmp_path / "big")]) is None
    path = next(iter(kept))
    assert cache.get(path, (0, 100)) is None  # another version of the file is another key
    cache.forget([path])
    assert cache.get(path, first.files[path]) is None
