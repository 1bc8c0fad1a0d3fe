"""The environment block's git facts come from one ``git status --short --branch`` (start-up
time, issue 11): the same branch, status and "not a repository" as three separate calls gave,
checked against real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_cli.loop.system_prompt import _branch, gather_environment


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "trunk")
    (repo / "a.txt").write_text("a\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "one")
    return repo


def test_branch_status_and_detached_head_as_git_reports_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    env = gather_environment(repo)
    assert (env.is_git, env.git_branch, env.git_status) == (True, "trunk", "(clean)")

    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("n\n")
    env = gather_environment(repo)
    assert env.git_status == _git(repo, "status", "--short").strip()
    assert "a.txt" in env.git_status and "?? new.txt" in env.git_status

    _git(repo, "checkout", "-q", "--detach")
    assert gather_environment(repo).git_branch == "(detached HEAD)"
    assert _git(repo, "branch", "--show-current").strip() == ""


def test_a_branch_with_an_upstream_is_named_without_the_tracking_part(tmp_path: Path) -> None:
    upstream = _repo(tmp_path)
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(upstream), str(clone))
    _git(clone, "commit", "-q", "--allow-empty", "-m", "ahead")
    assert "...origin/trunk [ahead 1]" in _git(clone, "status", "--short", "--branch")
    assert gather_environment(clone).git_branch == "trunk"


def test_not_a_work_tree(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    env = gather_environment(plain)
    assert (env.is_git, env.git_branch, env.git_status) == (False, None, None)
    inside_git_dir = _repo(tmp_path) / ".git"
    assert gather_environment(inside_git_dir).is_git is False


def test_header_forms() -> None:
    assert _branch("## main") == "main"
    assert _branch("## feature/x...origin/feature/x [behind 2]") == "feature/x"
    assert _branch("## No commits yet on fresh") == "fresh"
    assert _branch("## Initial commit on old") == "old"
    assert _branch("## HEAD (no branch)") == "(detached HEAD)"
