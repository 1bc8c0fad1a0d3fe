"""Submodules only the git index records (no ``.gitmodules`` entry) are guarded like the others.

An embedded repository the user added with ``git add sub`` is a gitlink (mode 160000) in the
index; the user's plain ``git status`` at the top enters it and reads ``sub/.git/config``. So
inside the sandbox its config must be read-only (``tools.sandbox.gitguard``, given the paths
``tools.sandbox.gitlinks`` read from the index), and a gitlink path with nothing checked out
must not take a repository. Each attack is first shown to work outside the sandbox, on a copy
(the canary file appears); in the sandbox it fails, the index keeps its entry (nothing had to
be removed after the fact) and ``git status`` runs nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.tools.sandbox.support import World, needs_sandbox, run_bash
from tests.tools.sandbox.test_git_guard import Canary, git, unsandboxed_control
from tools.sandbox.gitguard import guard_git

pytestmark = needs_sandbox

INIT = "git init -q && git -c user.name=n -c user.email=e@x commit -q --allow-empty -m s"


def _gitlinks(repo: Path) -> list[str]:
    out = git(repo, "ls-files", "--stage")
    return [line.split("\t", 1)[1] for line in out.splitlines() if line.startswith("160000 ")]


def _project(world: World, *, gitfile: bool = False) -> Path:
    """A project whose index records ``sub`` (an embedded repository: no ``.gitmodules``);
    ``gitfile``: its ``.git`` is a ``gitdir:`` file naming ``.subgit`` at the top."""
    project = world.project
    (project / "a.txt").write_text("a\n")
    sub = project / "sub"
    sub.mkdir()
    if gitfile:
        git(project, "init", "-q", "--separate-git-dir", str(project / ".subgit"), "sub")
        (sub / ".git").write_text("gitdir: ../.subgit\n")  # relative: a copy is self-contained
        (project / ".git" / "info" / "exclude").write_text(".subgit/\n")  # not untracked
    else:
        git(sub, "init", "-q")
    git(sub, "commit", "-q", "--allow-empty", "-m", "s")
    git(project, "add", "a.txt", "sub")
    git(project, "commit", "-qm", "init")
    assert _gitlinks(project) == ["sub"] and not (project / ".gitmodules").exists()
    return project


def _sub_config(project: Path) -> Path:
    dotgit = project / "sub" / ".git"
    return dotgit / "config" if dotgit.is_dir() else project / ".subgit" / "config"


ATTACKS = {
    "append": "printf '{config}' >> {dotgit}/config",
    "git-config": "git -C sub config core.fsmonitor {script}",
    "replace-dotgit": (
        "mv sub/.git sub/old 2>/dev/null || rm -f sub/.git; mkdir sub/.git && "
        "cp -r {src}/HEAD {src}/objects {src}/refs sub/.git/ && "
        "printf '{config}' > sub/.git/config"
    ),
    "replace-checkout": "mv sub sub2 && mkdir sub && cd sub && {init} && printf '{config}' >> "
    ".git/config",
}


@pytest.mark.parametrize("gitfile", [False, True], ids=["dotgit-dir", "dotgit-file"])
@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_an_index_only_submodules_config_cannot_be_planted(
    world: World, name: str, gitfile: bool
) -> None:
    project = _project(world, gitfile=gitfile)
    canary = Canary(world.root)
    dotgit, src = (".subgit", ".subgit") if gitfile else ("sub/.git", "sub/old")
    attack = ATTACKS[name].format(
        config=canary.config, script=canary.script, dotgit=dotgit, src=src, init=INIT
    )
    unsandboxed_control(world, attack, canary)  # unsandboxed: the top's git status runs the plant
    config = _sub_config(project).read_bytes()
    out = await run_bash(world, attack)
    assert _sub_config(project).read_bytes() == config, out.output
    assert not canary.sung_after_git_status(project)
    assert _gitlinks(project) == ["sub"]  # nothing planted: nothing to remove afterwards
    assert not any("submodule" in n for n in out.notices), out.notices


@pytest.mark.parametrize("missing", [False, True], ids=["empty-dir", "no-dir"])
async def test_a_gitlink_with_nothing_checked_out_takes_no_repository(
    world: World, missing: bool
) -> None:
    project = _project(world)
    shutil.rmtree(project / "sub")
    if not missing:
        (project / "sub").mkdir()  # as ``git submodule deinit`` leaves it
    canary = Canary(world.root)
    attack = (
        f"mkdir -p sub; cd sub && {INIT} && printf '{canary.config}' >> .git/config && echo planted"
    )
    unsandboxed_control(
        world, attack, canary
    )  # the index does not change, yet git status enters it
    out = await run_bash(world, attack)
    assert "planted" not in out.output, out.output
    assert not canary.sung_after_git_status(project)
    assert _gitlinks(project) == ["sub"]  # the mounts stopped it, not the removal afterwards
    assert not any("submodule" in n for n in out.notices), out.notices
    # the stub is gone again; an existing empty directory stays
    assert (project / "sub").is_dir() != missing
    assert not (project / "sub" / ".git").exists()


async def test_ordinary_git_work_runs_with_index_only_submodules(world: World) -> None:
    project = _project(world)
    git(project, "branch", "without-other")
    other = project / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "o")
    git(project, "add", "other")
    git(project, "commit", "-qm", "other")
    shutil.rmtree(other)
    other.mkdir()  # recorded, not checked out
    out = await run_bash(
        world,
        "export GIT_AUTHOR_NAME=n GIT_AUTHOR_EMAIL=n@x GIT_COMMITTER_NAME=n "
        "GIT_COMMITTER_EMAIL=n@x; set -e; git status --short; git diff; echo b > b.txt; "
        "git add b.txt; git commit -qm b; git -C sub commit -q --allow-empty -m inside; "
        "git -C sub status --short; git add sub; git commit -qm bump; git branch feat; "
        "git checkout -q feat; echo c >> b.txt; git commit -qam c; git checkout -q -; "
        "git merge -q feat; echo d >> a.txt; git stash -q; git stash pop -q; git commit -qam d; "
        "git checkout -q without-other 2>&1; git status --short; git checkout -q - 2>&1; "
        "git log --oneline | wc -l; git status --short; echo all-ok",
    )
    assert out.exit_code == 0 and "all-ok" in out.output, out.output
    # leaving a branch that records ``other`` cannot remove its (read-only) directory: git
    # warns ("unable to rmdir 'other'") and goes on
    assert "fatal" not in out.output and "error" not in out.output, out.output
    assert not any("submodule" in n for n in out.notices), out.notices
    assert sorted(_gitlinks(project)) == ["other", "sub"]
    assert "bump" in git(project, "log", "--oneline")
    assert git(project, "status", "--short") == ""
    assert sorted(os.listdir(other)) == []  # nothing of the sandbox's left there


def test_the_guard_keeps_an_index_only_checkout_and_an_empty_path(tmp_path: Path) -> None:
    """Without a sandbox: what ``guard_git`` returns for the paths the index records."""
    top = tmp_path / "top"
    (top / ".git").mkdir(parents=True)
    (top / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (top / "sub" / ".git" / "hooks").mkdir(parents=True)
    (top / "sub" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (top / "sub" / ".git" / "config").write_text("[core]\n")
    (top / "empty").mkdir()
    links = [top / "sub", top / "empty", top / "gone", top / "deep" / "gone"]
    guard = guard_git([(top, True)], lambda p: p.is_relative_to(top), tmp_path, links)
    assert top / "sub" / ".git" / "config" in guard.read_only
    assert top / "sub" / ".git" / "hooks" in guard.read_only
    assert top / "empty" in guard.read_only
    assert guard.stubs.get(top / "gone", b"x") is None  # an empty directory
    assert top / "deep" / "gone" not in guard.stubs  # no parent to make it in
    before = guard_git([(top, True)], lambda p: p.is_relative_to(top), tmp_path)
    assert top / "sub" / ".git" / "config" not in before.read_only  # .gitmodules only, before
    assert top / "gone" not in before.stubs
