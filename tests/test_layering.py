"""What the import-linter contracts in ``pyproject.toml`` cannot say.

``lint-imports`` (run by ``.ci/run``) checks every import statement: the package order
config <- permissions <- tools <- agent_cli, the wings of every package that has wings
(``agent_cli``, ``agent_cli.frontends``, ``agent_cli.tui``, ``tools``, ``tools.builtin``,
``permissions``) in their order, and where textual and the anthropic SDK may be imported. Here:
importing a lower package at run time pulls in nothing above it; no package, at any level, has
a circle of run-time imports between its children (a lazy import inside a function counts: it is
still a dependency); every package declares ``__all__``; the top of ``agent_cli`` stays small;
and no function is longer than 100 lines.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["config", "permissions", "tools", "agent_cli"]
MAX_FUNCTION_LINES = 100
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


def _function_lengths(path: Path) -> Iterator[tuple[int, str, int]]:
    """(line, name, lines) of every def and async def in ``path``, methods and nested functions
    included, from its first decorator to its last line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            yield node.lineno, node.name, (node.end_lineno or node.lineno) - start + 1


def test_no_function_over_the_line_limit() -> None:
    long = [
        f"{p.relative_to(ROOT)}:{line}: {name} is {n} lines"
        for layer in LAYERS
        for p in sorted((ROOT / layer).rglob("*.py"))
        for line, name, n in _function_lengths(p)
        if n > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def _child(package: str, module: str) -> str | None:
    """The child of ``package`` (a module or a subpackage) that ``module`` is or lies in."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1 :].split(".")[0]


def _strong_components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan: the strongly connected components of more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _import_cycles(graph: grimp.ImportGraph, package: str) -> list[str]:
    """Each circle between the children of ``package``, with the import lines that form it."""
    edges: dict[str, set[str]] = defaultdict(set)
    lines: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module in graph.modules:
        importer = _child(package, module)
        if importer is None:
            continue
        edges[importer]
        for imported_module in graph.find_modules_directly_imported_by(module):
            imported = _child(package, imported_module)
            if imported is None or imported == importer:
                continue
            edges[importer].add(imported)
            for d in graph.get_import_details(importer=module, imported=imported_module):
                lines[importer, imported].append(
                    f"{module}:{d['line_number']}: {d['line_contents']}"
                )
    cycles = []
    for component in _strong_components(edges):
        members = set(component)
        shown = [
            line
            for a in component
            for b in sorted(edges[a] & members)
            for line in sorted(lines[a, b])
        ]
        names = ", ".join(c.rsplit(".", 1)[1] for c in component)
        cycles.append(f"{package}: {names}\n    " + "\n    ".join(shown))
    return cycles


def test_no_import_cycle_at_any_level() -> None:
    """At every level (a package's children: its modules and subpackages), the run-time imports
    between the children form no circle."""
    graph = grimp.build_graph(*LAYERS, exclude_type_checking_imports=True, cache_dir=None)
    packages = sorted({m for m in graph.modules if graph.find_children(m)})
    cycles = [cycle for package in packages for cycle in _import_cycles(graph, package)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


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
