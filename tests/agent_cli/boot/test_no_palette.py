"""``agent_cli.boot.no_palette``: the real command starts without Textual's command palette.

Fresh interpreters, since the stand-in must be in place before ``textual.app`` is imported. The
real ``nerve`` on a pty (paints, builds its session, loads none of the palette's widgets) is
tests/agent_cli/frontends/test_interactive_startup.py.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import textual

from agent_cli.boot.no_palette import MODULE, NAMES


def run(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _module_level_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    """``from ... import`` statements run at import (not in a function or TYPE_CHECKING)."""
    out: list[ast.ImportFrom] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            out += [n for n in ast.walk(node) if isinstance(n, ast.ImportFrom)]
        elif isinstance(node, ast.Try):
            out += [n for n in ast.walk(node) if isinstance(n, ast.ImportFrom)]
    return out


def test_textual_imports_only_the_stand_in_names_from_the_palette_module() -> None:
    root = Path(textual.__file__).parent
    importers: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).with_suffix("").as_posix().replace("/", ".")
        if rel in ("command", "system_commands"):  # the palette itself and its own provider
            continue
        for node in _module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if node.module in (MODULE, "command") or (node.level and node.module == "command"):
                importers.setdefault(rel, set()).update(a.name for a in node.names)
            if node.module in ("textual.system_commands", "system_commands"):
                importers.setdefault(rel, set()).add("<textual.system_commands>")
    assert importers, "Textual no longer imports textual.command at all: drop the stand-in"
    extra = {mod: names - set(NAMES) for mod, names in importers.items() if names - set(NAMES)}
    assert extra == {}, f"Textual now imports more from {MODULE}: {extra}"


def test_the_app_imports_and_the_palette_stays_out() -> None:
    out = run(
        "import sys\n"
        "from agent_cli.boot.no_palette import skip_command_palette\n"
        "print('SKIPPED', skip_command_palette())\n"
        "import agent_cli.tui.app as app_module\n"
        "from textual.theme import ThemeProvider\n"
        "import textual.command as command\n"
        "print('STAND-IN', getattr(command, 'STAND_IN', False))\n"
        "print('PALETTE', app_module.NerveApp.ENABLE_COMMAND_PALETTE)\n"
        "print('WIDGETS', [m for m in ('textual.types', 'textual.widgets._input',"
        " 'textual.widgets._select', 'textual.system_commands') if m in sys.modules])\n"
        "try:\n"
        "    command.CommandPalette()\n"
        "except RuntimeError as exc:\n"
        "    print('OPEN', exc)\n"
        "print('AGAIN', skip_command_palette())\n"
    )
    assert "SKIPPED True" in out
    assert "STAND-IN True" in out
    assert "PALETTE False" in out
    assert "WIDGETS []" in out
    assert "OPEN Nerve runs without Textual's command palette" in out
    assert "AGAIN False" in out


def test_too_late_once_textual_is_loaded_and_never_for_a_library_caller() -> None:
    out = run(
        "import textual.app\n"
        "from agent_cli.boot.no_palette import skip_command_palette\n"
        "import textual.command as command\n"
        "print('SKIPPED', skip_command_palette(), hasattr(command, 'STAND_IN'))\n"
    )
    assert "SKIPPED False False" in out
    out = run(
        "import sys\n"
        "from agent_cli import cli\n"
        "cli.main(['--version'])\n"
        f"print('STAND-IN', {MODULE!r} in sys.modules)\n"
    )
    assert "STAND-IN False" in out
