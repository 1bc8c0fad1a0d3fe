"""``nerve --version`` and ``nerve --help`` import nothing heavy."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("anthropic", "textual", "mcp", "tree_sitter", "tree_sitter_bash", "httpx", "pydantic")


def _modules_after(args: list[str]) -> tuple[str, set[str]]:
    code = (
        "import sys\n"
        "from agent_cli.cli import main\n"
        f"rc = main({args!r})\n"
        "print('MODULES', ' '.join(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    mods = set(lines[-1].split()[1:])
    return "\n".join(lines[:-1]), mods


def test_version_is_light() -> None:
    text, mods = _modules_after(["--version"])
    assert "Nerve" in text
    assert not mods & set(HEAVY), mods & set(HEAVY)


def test_help_is_light() -> None:
    text, mods = _modules_after(["--help"])
    assert "usage: nerve" in text
    assert not mods & set(HEAVY), mods & set(HEAVY)


def test_console_script_version() -> None:
    import shutil

    exe = shutil.which("nerve") or str(
        __import__("pathlib").Path(sys.executable).with_name("nerve")
    )
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("0.")
