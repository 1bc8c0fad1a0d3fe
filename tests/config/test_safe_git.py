"""Nerve's own git runs pin a configuration the repository cannot override (real git)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from config.safe_git import pin_git_env, safe_git_argv


def _repo(path: Path, canary: Path) -> Path:
    """A repository whose config runs ``canary``-writing programs: an fsmonitor hook and a
    hooks directory (post-checkout, reference-transaction) it names itself."""
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    hooks = path / "hooks-here"
    hooks.mkdir()
    for name in ("post-checkout", "reference-transaction", "pre-commit"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {canary}-{name}\n")
        hook.chmod(0o755)
    for key, value in (
        ("core.fsmonitor", f"touch {canary}; false"),
        ("core.hooksPath", str(hooks)),
    ):
        subprocess.run(["git", "config", key, value], cwd=path, check=True)
    return path


def _ran(canary: Path) -> list[str]:
    return sorted(p.name for p in canary.parent.glob(canary.name + "*"))


def test_plain_git_runs_the_planted_programs(tmp_path: Path) -> None:
    """The premise of the other tests: without the pins these programs do run."""
    canary = tmp_path / "CANARY"
    repo = _repo(tmp_path / "r", canary)
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=True)
    subprocess.run(["git", "branch", "b1"], cwd=repo, capture_output=True, check=False)
    assert "CANARY" in _ran(canary)


def test_safe_git_argv_runs_no_fsmonitor_and_no_hook(tmp_path: Path) -> None:
    canary = tmp_path / "CANARY"
    repo = _repo(tmp_path / "r", canary)
    (repo / "f").write_text("x\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    for args in (("status", "--short"), ("add", "f"), ("commit", "-qm", "x"), ("branch", "b")):
        proc = subprocess.run(safe_git_argv(*args, cwd=repo), capture_output=True, env=env)
        assert proc.returncode == 0, proc.stderr
    assert _ran(canary) == []


def test_safe_git_argv_refuses_a_planted_bare_repository(tmp_path: Path) -> None:
    bare = tmp_path / "planted"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    (bare / "config").write_text("[core]\n\tbare = true\n")
    plain = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=bare, capture_output=True)
    assert plain.returncode == 0  # git alone takes it for a repository
    pinned = subprocess.run(safe_git_argv("rev-parse", "--git-dir"), cwd=bare, capture_output=True)
    assert pinned.returncode != 0 and b"bare" in pinned.stderr


def test_pin_git_env_adds_one_entry_after_the_users(tmp_path: Path) -> None:
    base = {"PATH": os.environ["PATH"], "GIT_CONFIG_COUNT": "1"}
    base.update(GIT_CONFIG_KEY_0="user.name", GIT_CONFIG_VALUE_0="Ada")
    env = pin_git_env(base)
    assert env["GIT_CONFIG_COUNT"] == "2"
    assert (env["GIT_CONFIG_KEY_0"], env["GIT_CONFIG_VALUE_0"]) == ("user.name", "Ada")
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == ("core.fsmonitor", "false")
    assert pin_git_env(env) == env  # pinning twice adds nothing
    assert base["GIT_CONFIG_COUNT"] == "1"  # the input is not changed


@pytest.mark.parametrize("count", ["", "0"])
def test_pin_git_env_from_nothing(count: str) -> None:
    env = pin_git_env({"GIT_CONFIG_COUNT": count} if count else {})
    assert env == {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": "false",
    }


def test_pin_git_env_leaves_a_malformed_count_alone() -> None:
    assert pin_git_env({"GIT_CONFIG_COUNT": "x"}) == {"GIT_CONFIG_COUNT": "x"}


def test_git_honours_the_pinned_environment(tmp_path: Path) -> None:
    canary = tmp_path / "CANARY"
    repo = _repo(tmp_path / "r", canary)
    proc = subprocess.run(
        ["git", "status"], cwd=repo, capture_output=True, env=pin_git_env(os.environ)
    )
    assert proc.returncode == 0, proc.stderr
    assert _ran(canary) == []
