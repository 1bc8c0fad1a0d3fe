"""``agent_cli.boot.code_cache``: dataclasses' generated methods compiled once, across runs.

Fresh interpreters: the cache must be in place before the dataclasses are made, and the second
run must find what the first one saved.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Dataclasses of every kind the stdlib generates code for; printed as their methods see them.
CLASSES = r"""
from __future__ import annotations
import dataclasses, inspect
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True)
class Frozen:
    a: int
    b: str = "x"
    c: tuple[int, ...] = ()

@dataclass(order=True)
class Ordered:
    n: int
    items: list[str] = field(default_factory=list)

@dataclass(kw_only=True)
class KwOnly:
    name: str
    size: int = 3

f = Frozen(1)
try:
    f.a = 2
    frozen = "mutable"
except dataclasses.FrozenInstanceError:
    frozen = "frozen"
print("FROZEN", repr(f), frozen, hash(f) == hash(Frozen(1)), f == Frozen(1, "x"))
print("ORDER", Ordered(1) < Ordered(2), Ordered(1, ["a"]), Ordered(1).items is not Ordered(1).items)
print("KW", KwOnly(name="n"), inspect.signature(KwOnly.__init__))
print("SIG", inspect.signature(Frozen.__init__), Frozen.__init__.__annotations__)

import re
word = re.compile(r"(?P<key>\w+)=(?P<value>[^;]*)(?:;|$)", re.I | re.M)
raw = re.compile(rb"(a|b)+c{2,3}")
print("RE", word.groupindex, word.groups, word.flags, word.findall("A=1;b=two\nc="))
print("RE", raw.flags, bool(raw.fullmatch(b"abacc")), raw.fullmatch(b"ac") is None)
print("RE", re.sub(r"(?<=x)y", "Z", "xyzy"), re.split(r"\s*,\s*", "a , b,c"))

import collections, typing
Point = collections.namedtuple("Point", "x y", defaults=[0])
class Size(typing.NamedTuple):
    width: int
    height: int = 1
print("NT", Point(1), Point(1, 2)._asdict(), Point.__new__.__code__.co_filename, Size(3), Size._fields)
print("FWD", typing.get_type_hints(Frozen), typing.get_type_hints(Ordered))
print("FWD", typing.ForwardRef("dict[str, int]").__forward_code__.co_names)
try:
    typing.ForwardRef("not valid (")
except SyntaxError:
    print("FWD a bad annotation is still a SyntaxError")
"""


def run(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def with_cache(path: Path) -> str:
    return (
        "from agent_cli.boot import code_cache\n"
        f"code_cache.install({str(path)!r})\n"
        f"exec(compile({CLASSES!r}, 'classes', 'exec'))\n"
        "print('STATS', code_cache.stats())\n"
        "print('SAVED', code_cache.save())\n"
    )


def _results(out: str) -> list[str]:
    return [line for line in out.splitlines() if not line.startswith(("STATS", "SAVED"))]


def test_classes_are_the_same_and_the_second_run_compiles_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "dc.marshal"
    plain = run(f"exec(compile({CLASSES!r}, 'classes', 'exec'))")
    first = run(with_cache(cache))
    assert "SAVED True" in first and cache.exists()
    second = run(with_cache(cache))
    assert _results(first) == _results(second) == plain.splitlines()
    assert "FROZEN Frozen(a=1, b='x', c=()) frozen True True" in plain
    # annotations stay what the class says (this module's __future__ import is not inherited)
    assert "'a': 'int'" in plain
    assert "NT Point(x=1, y=0) {'x': 1, 'y': 2} <string> Size(width=3, height=1)" in plain
    stats = next(line for line in second.splitlines() if line.startswith("STATS"))
    assert "'added': 0" in stats and "'hits': 0" not in stats and "'patterns': 0" not in stats
    assert "SAVED False" in second  # nothing new: the file is not rewritten
    # namedtuple's __new__ text is among what the file keeps (collections' eval)
    import marshal

    forward = marshal.loads(cache.read_bytes())["eval"]
    assert "lambda _cls, x, y: _tuple_new(_cls, (x, y))" in forward


def test_a_pattern_entry_that_does_not_fit_is_compiled_afresh(tmp_path: Path) -> None:
    cache = tmp_path / "dc.marshal"
    plain = run(f"exec(compile({CLASSES!r}, 'classes', 'exec'))")
    run(with_cache(cache))
    spoil = (
        "import marshal\n"
        f"data = marshal.loads(open({str(cache)!r}, 'rb').read())\n"
        "def bad(v):\n"
        "    v = marshal.loads(v)\n"
        "    return marshal.dumps((v[0], [1, 2, 3], *v[2:]))\n"
        "data['re'] = {k: bad(v) for k, v in data['re'].items()}\n"
        f"open({str(cache)!r}, 'wb').write(marshal.dumps(data))\n"
    )
    run(spoil)  # every stored program replaced by one the engine rejects
    assert _results(run(with_cache(cache))) == plain.splitlines()


def test_a_new_version_starts_a_new_file_and_removes_the_old_ones(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    old = folder / "start-code-0.0.1-cpython-311-30b07f0.marshal"
    old.write_bytes(b"old")
    keep = folder / "notes.txt"
    keep.write_text("not ours")
    out = run(
        f"import os; os.environ['NERVE_DATA_DIR'] = {str(tmp_path)!r}\n"
        "from agent_cli.boot import code_cache\n"
        "code_cache.install()\n"
        f"exec(compile({CLASSES!r}, 'classes', 'exec'))\n"
        "print('SAVED', code_cache.save(), os.path.basename(code_cache.cache_path()))\n"
    )
    assert "SAVED True start-code-" in out
    assert not old.exists() and keep.exists()
    assert len(list(folder.glob("start-code-*.marshal"))) == 1


def test_a_broken_cache_file_is_an_empty_cache(tmp_path: Path) -> None:
    cache = tmp_path / "dc.marshal"
    cache.write_bytes(b"\x00not marshal data")
    out = run(with_cache(cache))
    assert "FROZEN Frozen(a=1, b='x', c=()) frozen True True" in out
    assert "SAVED True" in out


def test_the_real_command_installs_it_and_the_module_index_a_library_caller_neither(
    tmp_path: Path,
) -> None:
    check = (
        "from agent_cli.boot import code_cache, module_index\n"
        "print('ON', code_cache.installed() and module_index.installed())\n"
        "print('INDEX', module_index.installed())\n"
    )
    env_code = f"import os; os.environ['NERVE_DATA_DIR'] = {str(tmp_path)!r}\n"
    real = env_code + "import sys\nsys.argv = ['nerve', {}]\nfrom agent_cli import cli\n"
    # a run (here one that stops at a bad flag) installs it; --version has nothing to compile
    assert "ON True" in run(real.format("'--no-such-flag'") + "cli.main()\n" + check)
    version = run(real.format("'--version'") + "cli.main()\n" + check)
    assert "ON False" in version and "INDEX False" in version
    lib = env_code + "from agent_cli import cli\ncli.main(['--no-such-flag'])\n"
    library = run(lib + check)
    assert "ON False" in library and "INDEX False" in library


def test_entries_are_decoded_when_used_and_a_damaged_one_is_compiled_afresh(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "dc.marshal"
    plain = run(f"exec(compile({CLASSES!r}, 'classes', 'exec'))")
    run(with_cache(cache))
    spoil = (  # every stored entry kept as bytes; one method's bytes cut short
        "import marshal\n"
        f"data = marshal.loads(open({str(cache)!r}, 'rb').read())\n"
        "assert all(type(v) is bytes for t in ('code', 'eval', 're') for v in data[t].values())\n"
        "data['code'] = {k: v[:7] for k, v in data['code'].items()}\n"
        f"open({str(cache)!r}, 'wb').write(marshal.dumps(data))\n"
    )
    run(spoil)
    out = run(with_cache(cache))
    assert _results(out) == plain.splitlines()
    assert "SAVED True" in out  # the damaged entries were compiled again and stored


def test_another_modules_table_is_kept_in_the_same_file(tmp_path: Path) -> None:
    cache = tmp_path / "dc.marshal"
    store = (
        "from agent_cli.boot import code_cache\n"
        f"code_cache.install({str(cache)!r})\n"
        "t = code_cache.table('mine')\n"
        "print('HAD', dict(t))\n"
        "t[('k', 1)] = b'value'\n"
        "code_cache.note_added()\n"
        "print('SAVED', code_cache.save())\n"
    )
    assert "HAD {}" in run(store)
    assert "HAD {('k', 1): b'value'}" in run(store)
