"""Nothing in the product replaces part of a module it does not own (DESIGN.md, Style).

An AST scan of ``config``, ``permissions``, ``tools`` and ``agent_cli`` for the ways start-up
was once made faster by patching Python or a dependency at run time:

* an assignment to (or ``del``, ``setattr``/``delattr`` of) an attribute of a name bound by an
  import of another package, at any depth: ``dataclasses.exec = ...``,
  ``stylesheet.Stylesheet._parse_rules = ...``, ``setattr(stand_in_module, ...)`` on an
  imported one;
* a write to ``sys.modules`` (``sys.modules[name] = ...``, ``del``, ``setdefault``,
  ``update``, ``pop``...), which plants or hides a module for every later import;
* any use of the import machinery's hooks: ``sys.meta_path``, ``sys.path_hooks``,
  ``sys.path_importer_cache``.

Reading ``sys.modules`` (``"x" in sys.modules``) and calling a module's public functions
(``gc.freeze()``, ``os.environ[...] = ...``, ``sys.setswitchinterval``) stay allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
OURS = ("config", "permissions", "tools", "agent_cli")
IMPORT_HOOKS = frozenset({"meta_path", "path_hooks", "path_importer_cache"})
MUTATORS = frozenset(
    {"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"}
)


def _foreign_imports(tree: ast.Module) -> dict[str, str]:
    """Each name bound by an import of a package other than ours -> the module it came from."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in OURS:
                    names[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] not in OURS:
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (``a`` of ``a.b.c``), else None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_sys(node: ast.expr, attr: str | frozenset[str], foreign: dict[str, str]) -> bool:
    """``node`` is ``sys.<attr>`` (``sys`` as imported in this file)."""
    names = {attr} if isinstance(attr, str) else attr
    return (
        isinstance(node, ast.Attribute)
        and node.attr in names
        and isinstance(node.value, ast.Name)
        and foreign.get(node.value.id) == "sys"
    )


def _patched_attribute(target: ast.expr, foreign: dict[str, str]) -> str | None:
    if isinstance(target, ast.Attribute):
        root = _root(target)
        if root is not None and root in foreign:
            return f"sets an attribute of {foreign[root]} ({ast.unparse(target)})"
    if isinstance(target, ast.Subscript) and _is_sys(target.value, "modules", foreign):
        return f"writes sys.modules ({ast.unparse(target)})"
    return None


def _call_finding(node: ast.Call, foreign: dict[str, str]) -> str | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
        root = _root(node.args[0])
        if root is not None and root in foreign:
            return f"{func.id} on {foreign[root]} ({ast.unparse(node)})"
    if (
        isinstance(func, ast.Attribute)
        and func.attr in MUTATORS
        and _is_sys(func.value, "modules", foreign)
    ):
        return f"writes sys.modules ({ast.unparse(node)})"
    return None


def findings(path: Path) -> list[str]:
    """Where ``path`` replaces part of a module it does not own, one line each."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    foreign = _foreign_imports(tree)
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        found: str | None = None
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found = next(filter(None, (_patched_attribute(t, foreign) for t in targets)), None)
        elif isinstance(node, ast.Call):
            found = _call_finding(node, foreign)
        elif isinstance(node, ast.Attribute) and _is_sys(node, IMPORT_HOOKS, foreign):
            found = f"uses the import machinery ({ast.unparse(node)})"
        if found is not None:
            out.append((getattr(node, "lineno", 0), found))
    rel = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    return [f"{rel}:{line}: {what}" for line, what in sorted(set(out))]


def product_files(repo: Path = REPO) -> list[Path]:
    return sorted(p for package in OURS for p in (repo / package).rglob("*.py"))


def test_the_product_patches_no_module_it_does_not_own() -> None:
    files = product_files()
    assert len(files) > 300  # the scan really covers the tree
    found = [line for path in files for line in findings(path)]
    assert found == [], "\n".join(found)


def test_the_scan_sees_each_way_of_patching(tmp_path: Path) -> None:
    source = tmp_path / "patching.py"
    source.write_text(
        "import sys\n"
        "import dataclasses\n"
        "from textual.css import stylesheet\n"
        "from textual.css.stylesheet import Stylesheet as Sheet\n"
        "import re._compiler as compiler\n"
        "from agent_cli import boot\n"
        "dataclasses.exec = print\n"
        "stylesheet.Stylesheet._parse_rules = None\n"
        "Sheet._parse_rules = None\n"
        "def install():\n"
        "    import typing\n"
        "    typing.compile = compile\n"
        "    compiler.compile = None\n"
        "    setattr(dataclasses, 'exec', print)\n"
        "    del typing.compile\n"
        "    sys.modules['httpx._main'] = None\n"
        "    sys.modules.setdefault('tree_sitter', None)\n"
        "    del sys.modules['tree_sitter']\n"
        "    sys.meta_path.insert(0, object())\n"
        "boot.anything = 1\n"  # ours: allowed
        "loaded = 'textual.app' in sys.modules\n"  # a read: allowed
        "local = object()\n"
        "local.name = 1\n"  # not an imported module: allowed
    )
    lines = [line.split(": ", 1)[1] for line in findings(source)]
    assert len(lines) == 11, "\n".join(lines)
    assert not any("agent_cli" in line or "local" in line for line in lines)


def test_the_scan_catches_the_start_up_patches_this_tree_once_had(tmp_path: Path) -> None:
    old = tmp_path / "code_cache.py"
    old.write_text(
        "import marshal\n"
        "def install():\n"
        "    import dataclasses\n"
        "    dataclasses.exec = _cached_exec\n"
        "    import collections\n"
        "    collections.eval = _cached_eval\n"
    )
    assert len(findings(old)) == 2
