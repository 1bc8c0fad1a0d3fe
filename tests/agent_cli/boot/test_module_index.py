"""``agent_cli.boot.module_index``: where start-up's modules are, kept between runs.

Fresh interpreters, as ``nerve`` starts: the second run must find the same files through the
table the first one stored, and anything the table no longer describes (a module moved, a
module added in front of it on ``sys.path``, another ``sys.path``) must be found as Python
finds it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Imports stdlib, third-party, extension and our own modules plus the test's own ``mi_*``
# modules (on sys.path through PYTHONPATH), then prints where each came from.
RUN = r"""
import sys
from agent_cli.boot import code_cache, module_index
code_cache.install(sys.argv[1])
module_index.install()
import json, decimal, textual.app, agent_cli.tui.app
import mi_top, mi_pkg.sub
for name in ("json", "_decimal", "textual.app", "agent_cli.tui.app", "mi_top", "mi_pkg.sub"):
    print("FILE", name, sys.modules[name].__file__)
print("VALUE", mi_top.VALUE, mi_pkg.sub.VALUE)
print("HITS", module_index._finder.hits)
module_index.remember()
print("SAVED", code_cache.save())
"""


def run(cache: Path, *path: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))}
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(cache)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def files(out: list[str]) -> list[str]:
    return [line for line in out if line.startswith(("FILE", "VALUE"))]


def hits(out: list[str]) -> int:
    return int(next(line for line in out if line.startswith("HITS")).split()[1])


def modules(root: Path, top: str = "top", sub: str = "sub") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "mi_top.py").write_text(f"VALUE = {top!r}\n")
    (root / "mi_pkg").mkdir(exist_ok=True)
    (root / "mi_pkg" / "__init__.py").write_text("")
    (root / "mi_pkg" / "sub.py").write_text(f"VALUE = {sub!r}\n")
    return root


def test_the_second_run_finds_the_same_files_through_the_table(tmp_path: Path) -> None:
    cache, here = tmp_path / "start.marshal", modules(tmp_path / "mods")
    first = run(cache, here)
    assert hits(first) == 0 and "SAVED True" in first
    second = run(cache, here)
    assert files(second) == files(first)
    assert f"FILE mi_pkg.sub {here / 'mi_pkg' / 'sub.py'}" in second
    assert any(line.startswith("FILE _decimal") and line.endswith(".so") for line in second)
    assert hits(second) > 100  # everything imported after install came from the table
    assert "SAVED False" in second  # nothing new: the file is not rewritten


def test_a_module_that_moved_is_found_where_it_is_now(tmp_path: Path) -> None:
    cache, here = tmp_path / "start.marshal", modules(tmp_path / "mods")
    run(cache, here)
    run(cache, here)
    # mi_pkg/sub.py becomes the package mi_pkg/sub/; mi_pkg's own folder is not on sys.path,
    # so the table's key (sys.path and its folders' times) still matches
    stamp = os.stat(here).st_mtime_ns
    (here / "mi_pkg" / "sub.py").unlink()
    (here / "mi_pkg" / "sub").mkdir()
    (here / "mi_pkg" / "sub" / "__init__.py").write_text("VALUE = 'moved'\n")
    os.utime(here, ns=(stamp, stamp))
    out = run(cache, here)
    assert "VALUE top moved" in out
    assert f"FILE mi_pkg.sub {here / 'mi_pkg' / 'sub' / '__init__.py'}" in out


def test_a_module_added_in_front_on_sys_path_wins(tmp_path: Path) -> None:
    cache = tmp_path / "start.marshal"
    front, back = tmp_path / "front", modules(tmp_path / "back")
    front.mkdir()
    run(cache, front, back)
    assert "VALUE top sub" in run(cache, front, back)
    modules(front, top="front", sub="front sub")  # front's modification time changes
    assert "VALUE front front sub" in run(cache, front, back)


def test_another_sys_path_does_not_use_the_table(tmp_path: Path) -> None:
    cache = tmp_path / "start.marshal"
    one, two = modules(tmp_path / "one", top="one"), modules(tmp_path / "two", top="two")
    run(cache, one)
    out = run(cache, two)
    assert "VALUE two sub" in out and hits(out) == 0
    assert "VALUE one sub" in run(cache, one)  # each sys.path keeps its own table


def test_a_damaged_table_is_a_search_as_usual(tmp_path: Path) -> None:
    import marshal

    cache, here = tmp_path / "start.marshal", modules(tmp_path / "mods")
    first = run(cache, here)
    data = marshal.loads(cache.read_bytes())
    for entries in data["tables"]["modules"].values():
        for i, name in enumerate(entries):
            entries[name] = [None, ("x",), 1, 2, 3][i % 5]  # not an entry at all
    cache.write_bytes(marshal.dumps(data))
    out = run(cache, here)
    assert files(out) == files(first) and hits(out) == 0


def test_a_module_loaded_from_elsewhere_is_not_kept(tmp_path: Path) -> None:
    # a file loaded by path (not found on sys.path) must not become importable by name
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mi_loose.py").write_text("VALUE = 1\n")
    cache = tmp_path / "start.marshal"
    code = (
        "import sys, importlib.util\n"
        "from agent_cli.boot import code_cache, module_index\n"
        f"code_cache.install({str(cache)!r})\n"
        "module_index.install()\n"
        "try:\n"
        "    import mi_loose\n"
        "    print('IMPORTED')\n"
        "except ImportError:\n"
        "    print('NOT FOUND')\n"
        f"spec = importlib.util.spec_from_file_location('mi_loose', {str(elsewhere / 'mi_loose.py')!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules['mi_loose'] = module\n"
        "spec.loader.exec_module(module)\n"
        "module_index.remember()\n"
        "code_cache.save()\n"
    )
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "NOT FOUND"
