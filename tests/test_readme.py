"""The README's two set-up commands exist, and CI runs the test one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_setup_commands() -> None:
    cmds = _quick_start_commands()
    assert len(cmds) == 2, cmds
    run, test = cmds
    assert "nerve" in run and "pip install" in run
    assert "pytest" in test and ".[test]" in test


def test_ci_runs_the_readme_test_command() -> None:
    test_cmd = _quick_start_commands()[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_cmd in ci.splitlines()
