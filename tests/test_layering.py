"""What the import-linter contracts in ``pyproject.toml`` cannot say.

``lint-imports`` (run by ``.ci/run``) checks every import statement: the package order
config <- permissions <- tools <- agent_cli, the wings of ``agent_cli`` in their order, and
where textual and the anthropic SDK may be imported. Here: importing a lower package at run
time pulls in nothing above it, every package declares ``__all__``, the top of ``agent_cli``
stays small, and no module grows past 500 lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["config", "permissions", "tools", "agent_cli"]
MAX_LINES = 500
TOP_OF_AGENT_CLI = 5


def test_every_package_declares_all() -> None:
    missing = [
        str(init.relative_to(ROOT))
        for layer in LAYERS
        for init in sorted((ROOT / layer).rglob("__init__.py"))
        if "__all__" not in init.read_text(encoding="utf-8")
    ]
    assert not missing, f"packages without __all__: {missing}"


def test_agent_cli_keeps_few_modules_at_its_top() -> None:
    top = sorted(p.name for p in (ROOT / "agent_cli").glob("*.py"))
    assert len(top) <= TOP_OF_AGENT_CLI, top


def test_no_module_over_the_size_limit() -> None:
    big = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for layer in LAYERS
        for p in sorted((ROOT / layer).rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]
    assert not big, big


@pytest.mark.parametrize("layer", ["config", "permissions", "tools"])
def test_runtime_import_pulls_nothing_above(layer: str) -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"pkg = importlib.import_module({layer!r})\n"
        "for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "    if '.tests' in m.name: continue\n"
        "    importlib.import_module(m.name)\n"
        "print(' '.join(sorted(k for k in sys.modules if k.split('.')[0] in "
        "{'agent_cli','textual'} | set(" + repr(LAYERS[LAYERS.index(layer) + 1 :]) + "))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "", out.stdout
