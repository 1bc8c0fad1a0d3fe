"""Nerve's own git runs (worktrees) and the Bash tool's environment pin git's configuration:
a program the repository's config names does not run (real git, real processes)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tools.builtin._git_worktree import (
    create_or_reuse,
    find_repo_root,
    remove_worktree,
    worktree_changes,
)
from tools.process.runner import bash_path, run_in_group


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A repository with one commit whose config names an fsmonitor program and a hooks
    directory inside the work tree (as ``core.hooksPath = scripts/hooks`` would), each
    writing a canary; and the canary's stem."""
    for key in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{key}_NAME", "T")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "t@example.com")
    canary = tmp_path / "CANARY"
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "app.py"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=repo, check=True)
    hooks = repo / "scripts" / "hooks"
    hooks.mkdir(parents=True)
    for name in ("post-checkout", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {canary}-{name}\n")
        (hooks / name).chmod(0o755)
    for key, value in (
        ("core.fsmonitor", f"touch {canary}; false"),
        ("core.hooksPath", "scripts/hooks"),
    ):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    return repo, canary


def _ran(canary: Path) -> list[str]:
    return sorted(p.name for p in canary.parent.glob(canary.name + "*"))


def test_the_planted_programs_run_under_plain_git(planted: tuple[Path, Path]) -> None:
    repo, canary = planted
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=True)
    subprocess.run(["git", "branch", "probe"], cwd=repo, capture_output=True, check=True)
    assert _ran(canary) == ["CANARY", "CANARY-reference-transaction"]


def test_worktree_create_and_remove_run_none_of_them(planted: tuple[Path, Path]) -> None:
    repo, canary = planted
    assert find_repo_root(repo) == repo.resolve()
    session = create_or_reuse(repo, "feat")
    assert (session.path / "app.py").read_text() == "x = 1\n"
    assert worktree_changes(session).clean
    remove_worktree(session, force=False)
    assert not session.path.exists()
    assert _ran(canary) == []


async def test_the_bash_runner_pins_core_fsmonitor_off(planted: tuple[Path, Path]) -> None:
    repo, canary = planted
    chunks: list[bytes] = []
    outcome = await run_in_group(
        [bash_path(), "-c", "git status --short; git config --get core.fsmonitor"],
        cwd=repo,
        on_data=chunks.append,
        timeout_s=30,
    )
    assert outcome.exit_code == 0, b"".join(chunks)
    assert b"false" in b"".join(chunks)  # the command scope wins over .git/config
    assert "CANARY" not in _ran(canary)
