"""``agent_cli.boot.pydantic_plugins``: the real command starts without pydantic's plugin discovery.

Fresh interpreters, since the stand-in must be in place before pydantic is imported.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pydantic

from agent_cli.boot.pydantic_plugins import LOADER, skip_plugin_discovery


def run(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_settings_validate_without_importlib_metadata() -> None:
    out = run(
        "import sys\n"
        "from agent_cli.boot.pydantic_plugins import skip_plugin_discovery\n"
        "print('SKIPPED', skip_plugin_discovery())\n"
        "import pydantic\n"
        "from config.models import Settings\n"
        "s = Settings.model_validate({'permissions': {'allow': ['Read']}, 'statusLine': 1})\n"
        "print('ALLOW', s.permissions.allow, s.extras())\n"
        "try:\n"
        "    Settings.model_validate({'permissions': {'allow': 'Read'}})\n"
        "except pydantic.ValidationError:\n"
        "    print('REJECTED')\n"
        "print('METADATA', 'importlib.metadata' in sys.modules)\n"
    )
    assert "SKIPPED True" in out
    assert "ALLOW ['Read'] {'statusLine': 1}" in out
    assert "REJECTED" in out
    assert "METADATA False" in out


def test_the_real_command_installs_it_and_a_library_caller_does_not() -> None:
    out = run(
        "import sys\n"
        "sys.argv = ['nerve', '--version']\n"
        "from agent_cli import cli\n"
        "cli.main()\n"
        f"print('STAND-IN', {LOADER!r} in sys.modules and 'pydantic' not in sys.modules)\n"
    )
    assert "STAND-IN True" in out
    out = run(
        "import sys\n"
        "from agent_cli import cli\n"
        "cli.main(['--version'])\n"
        f"print('STAND-IN', {LOADER!r} in sys.modules)\n"
    )
    assert "STAND-IN False" in out


def test_too_late_once_pydantic_is_loaded() -> None:
    assert "pydantic" in sys.modules
    before = sys.modules.get(LOADER)
    assert skip_plugin_discovery() is False
    assert sys.modules.get(LOADER) is before


def test_pydantic_imports_only_get_plugins_from_the_loader() -> None:
    """The stand-in offers ``get_plugins`` alone: a pydantic that wants more must fail here."""
    names: set[str] = set()
    for path in Path(pydantic.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_loader"):
                if "plugin" in str(path.parent) or node.module == LOADER:
                    names |= {alias.name for alias in node.names}
    assert names == {"get_plugins"}
