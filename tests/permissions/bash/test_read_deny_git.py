"""A ``Read`` deny rule holds for git printing a file it names (``git show HEAD:secrets/key``,
``git log -p -- secrets/key``, ``git blame secrets/key``), as it does for ``cat``."""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext, RuleSource


def _ctx(cwd: Path, *deny: str) -> PermissionContext:
    rules = tuple(make_rule(r, "deny", RuleSource.CLI) for r in deny)
    return PermissionContext(cwd=cwd, rules=rules, home=cwd.parent)


@pytest.mark.parametrize(
    "command",
    [
        "git show HEAD:secrets/key",
        "git show main~2:secrets/key",
        "git cat-file -p HEAD:secrets/key",
        "git log -p -- secrets/key",
        "git diff HEAD~1 -- secrets/key",
        "git blame secrets/key",
        "git annotate secrets/key",
        "git -C . show HEAD:secrets/key",
    ],
)
def test_git_naming_a_denied_file_is_denied(tmp_path: Path, command: str) -> None:
    (tmp_path / "secrets").mkdir()
    v = assess_bash(command, _ctx(tmp_path, "Read(./secrets/**)")).verdict
    assert v.decision is Decision.DENY, v
    assert v.rule is not None and str(v.rule.value) == "Read(./secrets/**)"


@pytest.mark.parametrize(
    "command",
    ["git show HEAD:src/main.py", "git log -p -- src", "git blame src/main.py", "git show HEAD"],
)
def test_git_naming_other_files_stays_allowed(tmp_path: Path, command: str) -> None:
    v = assess_bash(command, _ctx(tmp_path, "Read(./secrets/**)")).verdict
    assert v.decision is Decision.ALLOW, v
