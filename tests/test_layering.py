"""The import direction config <- permissions <- tools <- agent_cli, and no textual below the app.

Checked two ways: statically (every import statement in every module) and dynamically
(importing each lower package in a fresh interpreter pulls in no higher package).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["config", "permissions", "tools", "agent_cli"]
FORBIDDEN_EVERYWHERE_BELOW_APP = {"textual"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", LAYERS)
def test_static_import_direction(layer: str) -> None:
    allowed_above = set(LAYERS[LAYERS.index(layer) + 1 :])
    offenders = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        bad = _imports(path) & allowed_above
        if layer != "agent_cli":
            bad |= _imports(path) & FORBIDDEN_EVERYWHERE_BELOW_APP
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)


def test_packages_exist_with_all() -> None:
    for layer in LAYERS:
        init = ROOT / layer / "__init__.py"
        assert init.is_file(), layer
        assert "__all__" in init.read_text(encoding="utf-8"), f"{layer}/__init__.py lacks __all__"


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
