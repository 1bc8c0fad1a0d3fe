"""Issue 32 item 2: a sandboxed command cannot plant git configuration that git runs outside.

Each attack is first run *outside* the sandbox, on a copy of the same repository, to show
that it does plant a ``core.fsmonitor`` that the next ``git status`` runs (the canary file
appears); then inside the sandbox, where it must fail and ``git status`` must run nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tools.sandbox.support import World, needs_sandbox, run_bash

pytestmark = needs_sandbox

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "n",
    "GIT_AUTHOR_EMAIL": "n@x",
    "GIT_COMMITTER_NAME": "n",
    "GIT_COMMITTER_EMAIL": "n@x",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=GIT_ENV,
        capture_output=True,
        text=True,
    )
    return proc.stdout + proc.stderr


class Canary:
    """A ``core.fsmonitor`` program that leaves a file behind when git runs it."""

    def __init__(self, root: Path) -> None:
        self.file = root / "CANARY"
        self.script = root / "fsmonitor.sh"
        self.script.write_text(f"#!/bin/sh\ntouch {self.file}\n")
        self.script.chmod(0o755)
        self.config = f"[core]\\n\\tfsmonitor = {self.script}\\n"

    def sung_after_git_status(self, project: Path) -> bool:
        self.file.unlink(missing_ok=True)
        git(project, "status", "--short")
        return self.file.exists()


def _repo(world: World) -> Path:
    project = world.project
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "init")
    return project


def unsandboxed_control(world: World, attack: str, canary: Canary) -> None:
    """The attack, run outside the sandbox on a copy: it must work there."""
    copy = world.root / "control"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(world.project, copy, symlinks=True)
    subprocess.run(["bash", "-c", attack], cwd=copy, env=GIT_ENV, capture_output=True)
    assert canary.sung_after_git_status(copy), f"the attack does nothing even unsandboxed: {attack}"
    canary.file.unlink()
    shutil.rmtree(copy)


ATTACKS = {
    "commondir": (
        "mkdir planted && cp -r .git/HEAD .git/index .git/objects .git/refs planted/ && "
        "printf '{config}' > planted/config && printf '%s\\n' \"$PWD/planted\" > .git/commondir"
    ),
    "rename": (
        "mv .git .git-old && mkdir .git && cp -r .git-old/HEAD .git-old/index .git-old/objects "
        ".git-old/refs .git/ && printf '{config}' > .git/config"
    ),
    "replace": (
        "mkdir .git-new && cp -r .git/HEAD .git/index .git/objects .git/refs .git-new/ && "
        "printf '{config}' > .git-new/config; rm -rf .git; mv -T .git-new .git"
    ),
    "config": "printf '{config}' >> .git/config",
    "git-config": "git config core.fsmonitor {script}",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_planting_a_fsmonitor_fails_in_the_sandbox(world: World, name: str) -> None:
    project = _repo(world)
    canary = Canary(world.root)
    attack = ATTACKS[name].format(config=canary.config, script=canary.script)
    unsandboxed_control(world, attack, canary)
    config = (project / ".git" / "config").read_bytes()
    await run_bash(world, attack)
    assert (project / ".git" / "config").read_bytes() == config
    assert not canary.sung_after_git_status(project)
    assert not (project / ".git" / "commondir").exists()  # the stub is gone again


async def test_files_git_would_read_cannot_be_created_or_changed(world: World) -> None:
    project = _repo(world)
    git(project, "config", "extensions.worktreeConfig", "true")
    out = await run_bash(
        world,
        "for f in .git/commondir .git/config.worktree .git/config .git/info/attributes "
        ".git/info/exclude .git/hooks/post-checkout; do "
        "echo x > $f 2>/dev/null && echo WROTE $f; done; "
        "rm -rf .git/info .git/hooks 2>/dev/null; mv .git/info info2 2>/dev/null; "
        "mv .git x 2>&1; rmdir .git 2>&1; echo done",
    )
    assert "WROTE" not in out.output and "done" in out.output
    assert out.output.count("Device or resource busy") == 2, out.output
    git_dir = project / ".git"
    assert not (git_dir / "config.worktree").exists() and not (git_dir / "commondir").exists()
    assert (git_dir / "info" / "exclude").is_file() and not (git_dir / "info/attributes").exists()
    assert (git_dir / "hooks").is_dir() and not (project / "x").exists()


async def test_ordinary_git_work_runs_in_the_sandbox(world: World) -> None:
    project = _repo(world)
    before = set(os.listdir(project / ".git"))
    out = await run_bash(
        world,
        "export GIT_AUTHOR_NAME=n GIT_AUTHOR_EMAIL=n@x GIT_COMMITTER_NAME=n "
        "GIT_COMMITTER_EMAIL=n@x; set -e; git status --short; echo b > b.txt; git add b.txt; "
        "git commit -qm b; git branch feat; git checkout -q feat; echo c >> b.txt; "
        "git commit -qam c; git checkout -q -; git merge -q feat; echo d >> a.txt; "
        "git stash -q; git stash pop -q; git commit -qam d; git tag v1; "
        "git rebase -q feat 2>&1; git log --oneline | wc -l; git rev-parse --git-dir; git gc -q; "
        "echo all-ok",
    )
    assert out.exit_code == 0 and "all-ok" in out.output, out.output
    assert git(project, "log", "--oneline").count("\n") == 4
    assert "feat" in git(project, "branch", "--list") and git(project, "tag").split() == ["v1"]
    # nothing of the sandbox's is left in the repository
    assert set(os.listdir(project / ".git")) - before <= {
        "ORIG_HEAD",
        "logs",
        "refs",
        "packed-refs",
    }


async def test_a_working_directory_without_a_repository_gets_none(world: World) -> None:
    shutil.rmtree(world.project / ".git")
    canary = Canary(world.root)
    attack = f"git init -q . 2>&1; printf '{canary.config}' >> .git/config; echo done"
    out = await run_bash(world, attack)
    assert "done" in out.output
    assert not (world.project / ".git").exists()  # the stub is gone, nothing was planted
    assert not canary.sung_after_git_status(world.project)
    sub = world.project / "sub"
    sub.mkdir()
    out = await run_bash(world, "cd sub && git init -q && echo nested-ok")
    assert "nested-ok" in out.output  # a new repository below the top still works


async def test_a_submodule_cannot_be_replaced_or_reconfigured(world: World) -> None:
    project = _repo(world)
    lib = world.root / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    git(lib, "commit", "-q", "--allow-empty", "-m", "lib")
    git(project, "submodule", "add", "-q", str(lib), "vendor/lib")
    git(project, "commit", "-qm", "sub")
    canary = Canary(world.root)
    plant = f"git init -q && touch f && git add f && printf '{canary.config}' >> .git/config"
    module = ".git/modules/vendor/lib"
    attacks = [
        f"printf '{canary.config}' >> {module}/config",
        f"git -C vendor/lib config core.fsmonitor {canary.script}",
        f"mv vendor/lib lib2 && mkdir vendor/lib && cd vendor/lib && {plant}",
        f"mv vendor v2 && mkdir -p vendor/lib && cd vendor/lib && {plant}",
        f"printf 'gitdir: %s\\n' \"$PWD/planted\" > vendor/lib/.git && mkdir planted && "
        f"cp -r {module}/HEAD {module}/index {module}/objects {module}/refs planted/ && "
        f"printf '{canary.config}' > planted/config",
    ]
    for attack in attacks:
        unsandboxed_control(world, attack, canary)
    for attack in attacks:
        await run_bash(world, attack)
        assert not canary.sung_after_git_status(project), attack
    out = await run_bash(
        world,
        "git -C vendor/lib -c user.name=n -c user.email=e@x "
        "commit -q --allow-empty -m inside && git status --short && echo ok",
    )
    assert "ok" in out.output, out.output  # work inside the submodule still runs


async def test_a_linked_worktree_and_the_hooks_path_and_includes_stay_read_only(
    world: World,
) -> None:
    project = _repo(world)
    git(project, "worktree", "add", "-q", ".nerve/worktrees/wt")
    git(project, "config", "core.hooksPath", ".githooks")
    git(project, "config", "include.path", "../shared.gitconfig")
    canary = Canary(world.root)
    wt = project / ".nerve" / "worktrees" / "wt"
    hook = f"#!/bin/sh\\ntouch {canary.file}\\n"
    await run_bash(
        world,
        f"printf 'gitdir: %s\\n' \"$PWD/planted\" > .nerve/worktrees/wt/.git; "
        f"printf '/tmp\\n' > .git/worktrees/wt/commondir; "
        f"printf '{canary.config}' > .git/worktrees/wt/config.worktree; "
        f"mkdir -p .githooks && printf '{hook}' > .githooks/post-commit && "
        f"chmod +x .githooks/post-commit; printf '{canary.config}' > shared.gitconfig; "
        "echo inside > .nerve/worktrees/wt/new.txt",
    )
    assert (wt / "new.txt").read_text() == "inside\n"  # the worktree itself is writable
    assert not canary.sung_after_git_status(wt) and not canary.sung_after_git_status(project)
    git(project, "commit", "-q", "--allow-empty", "-m", "hooks?")
    assert not canary.file.exists()
    assert not (project / ".githooks").exists() and not (project / "shared.gitconfig").exists()


async def test_parents_of_protected_paths_cannot_be_moved_aside(world: World) -> None:
    home = world.root / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "config").write_text("[user]\n\tname = me\n")
    world.session(allow_write=(home,))
    out = await run_bash(
        world,
        f"mv {home}/.config {home}/c2 2>&1; mkdir -p {home}/.config/git 2>&1; "
        f"echo '[core]' >> {home}/.config/git/config 2>&1; echo done",
    )
    assert "Device or resource busy" in out.output and "done" in out.output
    assert (home / ".config" / "git" / "config").read_text() == "[user]\n\tname = me\n"
    assert not (home / "c2").exists()
