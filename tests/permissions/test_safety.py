"""Protected paths (approvable) and path tricks (human only)."""

from __future__ import annotations

import os

import pytest

from permissions.safety import check_path_tricks, check_write_path, is_protected_path
from tests.permissions.conftest import World


@pytest.mark.parametrize(
    "rel",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        ".nerve/settings.json",
        ".claude/settings.local.json",
        ".vscode/settings.json",
        ".idea/workspace.xml",
        ".husky/pre-push",
        ".cargo/config.toml",
        ".devcontainer/devcontainer.json",
        ".yarn/releases/x.cjs",
        ".mvn/wrapper/maven-wrapper.properties",
        ".gitmodules",
        ".envrc",
        ".npmrc",
        ".mcp.json",
        ".pre-commit-config.yaml",
        "sub/dir/.GIT/config",  # case-folded: one directory on macOS / Windows
    ],
)
def test_protected_in_project(world: World, rel: str) -> None:
    check = check_write_path(world.cwd / rel, world.ctx())
    assert check is not None and check.classifier_approvable, rel


@pytest.mark.parametrize(
    "rel",
    [
        ".bashrc",
        ".zshrc",
        ".profile",
        ".gitconfig",
        ".claude.json",
        ".config/git/config",
        ".bash_profile",
        ".zprofile",
    ],
)
def test_protected_in_home(world: World, rel: str) -> None:
    check = check_write_path(world.home / rel, world.ctx())
    assert check is not None and check.classifier_approvable


@pytest.mark.parametrize(
    "rel",
    [
        "src/app.py",
        ".claude/worktrees/feature/src/a.py",
        ".gitignore",
        "docs/git/notes.md",
        ".github/workflows/ci.yml",
    ],
)
def test_not_protected(world: World, rel: str) -> None:
    assert check_write_path(world.cwd / rel, world.ctx()) is None


def test_inside_a_worktree_git_is_protected_again(world: World) -> None:
    assert is_protected_path(world.cwd / ".claude/worktrees/wt/.git/config", world.ctx())


def test_symlink_to_protected_target_is_protected(world: World) -> None:
    (world.cwd / ".git").mkdir()
    os.symlink(world.cwd / ".git" / "config", world.cwd / "innocent.txt")
    check = check_write_path(world.cwd / "innocent.txt", world.ctx())
    assert check is not None and ".git" in check.message


def test_symlink_out_of_working_dirs_is_a_trick(world: World) -> None:
    os.symlink(world.root / "outside", world.cwd / "out")
    check = check_write_path(world.cwd / "out" / "secret.txt", world.ctx())
    assert check is not None and not check.classifier_approvable
    assert "symlink" in check.message


@pytest.mark.parametrize(
    "raw",
    [
        "C:\\Windows\\System32\\x.dll",
        "c:/users/me/.bashrc",
        "\\\\server\\share\\file",
        "//?/C:/x",
        "//./pipe/x",
        "PROGRA~1/app/x.exe",
        "src/LONGNA~2.TXT",
        "file.txt:stream",
        "notes.txt::$DATA",
        "evil.txt.",
        "evil.txt ",
        "src/dir./x",
        "src/../../etc/passwd",
        "..\\..\\etc\\passwd",
    ],
)
def test_path_tricks_are_not_approvable(world: World, raw: str) -> None:
    check = check_path_tricks(raw, world.ctx())
    assert check is not None and not check.classifier_approvable, raw


def test_absolute_dotdot_escape_from_inside(world: World) -> None:
    raw = f"{world.cwd}/src/../../outside/secret.txt"
    assert check_path_tricks(raw, world.ctx()) is not None


@pytest.mark.parametrize(
    "raw",
    [
        "src/app.py",
        "./a/../b.txt",
        "../sibling/x.txt",
        "/etc/hosts",
        "~/notes.md",
        "src/..",
        "a.b.c",
        "file~backup",
    ],
)
def test_plain_paths_are_not_tricks(world: World, raw: str) -> None:
    # `../sibling` plainly leaves the project: that is the working-dir check's job, not a trick
    assert check_path_tricks(raw, world.ctx()) is None, raw
