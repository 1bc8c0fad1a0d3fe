"""A sandboxed command cannot leave a submodule entry in the git index (``tools.sandbox.gitlinks``).

The sandbox keeps every file git reads for configuration read-only, but the index stays
writable, so a command can make a repository in a subdirectory, give it a ``core.fsmonitor``
and record it in the index as a submodule: the user's next ``git status`` at the top enters it
and runs that program. Each attack is first shown to work outside the sandbox (the canary file
appears); run through the real Bash tool in the sandbox, the entry is gone again afterwards,
``git status`` runs nothing, and the result says what Nerve removed.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.tools.sandbox.support import World, needs_sandbox, run_bash
from tests.tools.sandbox.test_git_guard import Canary, git, unsandboxed_control
from tools.process.background import get_manager
from tools.sandbox import gitlinks

pytestmark = needs_sandbox

REMOVED = "Nerve removed the submodule entry sub/"
SUB = (
    "git init -q sub && git -C sub -c user.name=n -c user.email=e@x "
    "commit -q --allow-empty -m s && printf '{config}' >> sub/.git/config"
)
PLANTS = {
    "update-index": SUB + " && git update-index --add --cacheinfo 160000,$(git -C sub "
    "rev-parse HEAD),sub && echo planted",
    "add": SUB + " && git add sub 2>/dev/null && echo planted",
    "commit": SUB + " && git add sub 2>/dev/null && git -c user.name=n -c user.email=e@x "
    "commit -qm sub && echo planted",
}


def _repo(world: World) -> Path:
    project = world.project
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "init")
    return project


def _gitlinks(repo: Path) -> list[str]:
    out = git(repo, "ls-files", "--stage")
    return [line.split("\t", 1)[1] for line in out.splitlines() if line.startswith("160000 ")]


def _submodule(world: World, path: str = "vendor/lib") -> Path:
    """A real submodule, added outside the sandbox, and committed."""
    project = _repo(world)
    lib = world.root / "lib"
    if not lib.exists():
        lib.mkdir()
        git(lib, "init", "-q")
        git(lib, "commit", "-q", "--allow-empty", "-m", "lib")
    git(project, "submodule", "add", "-q", str(lib), path)
    git(project, "commit", "-qm", "submodule")
    assert _gitlinks(project) == [path]
    return project


@pytest.mark.parametrize("name", sorted(PLANTS))
async def test_a_planted_submodule_entry_is_removed_after_the_command(
    world: World, name: str
) -> None:
    project = _repo(world)
    canary = Canary(world.root)
    attack = PLANTS[name].format(config=canary.config)
    unsandboxed_control(world, attack, canary)
    out = await run_bash(world, attack)
    assert "planted" in out.output, out.output  # the index was writable: the plant went in
    assert _gitlinks(project) == []
    assert not canary.sung_after_git_status(project)
    notice = "\n".join(out.notices)
    assert REMOVED in notice and "dangerouslyDisableSandbox" in notice, notice
    assert "git submodule add` cannot complete in the sandbox" in notice
    assert (project / "sub" / ".git" / "config").is_file()  # the files stay where they are
    assert ("The last commit records sub/" in notice) == (name == "commit")


async def test_a_submodule_add_in_the_sandbox_is_undone_not_left_half_made(world: World) -> None:
    project = _repo(world)
    lib = world.root / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    git(lib, "commit", "-q", "--allow-empty", "-m", "lib")
    out = await run_bash(
        world, f"git -c protocol.file.allow=always submodule add -q {lib} vendor/lib 2>&1"
    )
    assert "could not write config file" in out.output, out.output  # .git/config: read-only
    assert _gitlinks(project) == []
    assert any("Nerve removed the submodule entry vendor/lib/" in n for n in out.notices)


async def test_ordinary_git_work_keeps_working_and_says_nothing(world: World) -> None:
    project = _repo(world)
    out = await run_bash(
        world,
        "set -e; echo b > b.txt; git add b.txt; git -c user.name=n -c user.email=e@x "
        "commit -qm b; echo c >> a.txt; git add -A; git status --short; echo all-ok",
    )
    assert out.exit_code == 0 and "all-ok" in out.output, out.output
    assert not any("submodule" in n for n in out.notices), out.notices
    assert git(project, "log", "--oneline").count("\n") == 2
    assert "M  a.txt" in git(project, "status", "--short")


async def test_a_submodule_added_outside_is_left_alone(world: World) -> None:
    project = _submodule(world)
    canary = Canary(world.root)
    out = await run_bash(
        world,
        "set -e; git -C vendor/lib -c user.name=n -c user.email=e@x commit -q --allow-empty "
        "-m inside; git add vendor/lib; git -c user.name=n -c user.email=e@x commit -qm bump; "
        "echo x > x.txt; git add x.txt; echo all-ok",
    )
    assert "all-ok" in out.output, out.output
    assert not any("submodule" in n for n in out.notices), out.notices
    assert _gitlinks(project) == ["vendor/lib"]  # its new commit recorded, the entry kept
    assert "bump" in git(project, "log", "--oneline", "-1")
    assert not canary.sung_after_git_status(project)


async def test_a_branch_with_a_submodule_checks_out_and_no_repository_can_be_put_there(
    world: World,
) -> None:
    project = _repo(world)
    git(project, "checkout", "-q", "-b", "feat")
    _submodule(world)
    git(project, "submodule", "deinit", "-q", "-f", "vendor/lib")
    git(project, "checkout", "-q", "-")
    assert _gitlinks(project) == []
    out = await run_bash(world, "git checkout -q feat && git status --short && echo on-feat")
    assert "on-feat" in out.output, out.output
    assert not any("submodule" in n for n in out.notices), out.notices
    assert _gitlinks(project) == ["vendor/lib"]  # not checked out: git enters nothing there
    canary = Canary(world.root)
    out = await run_bash(
        world,
        "cd vendor/lib && git init -q && git -c user.name=n -c user.email=e@x commit -q "
        f"--allow-empty -m s && printf '{canary.config}' >> .git/config && echo planted",
    )
    # the path the index records is read-only while a command runs (tools.sandbox.gitguard)
    assert "planted" not in out.output and "Read-only file system" in out.output, out.output
    assert _gitlinks(project) == ["vendor/lib"]
    assert not canary.sung_after_git_status(project)
    assert not any("submodule" in n for n in out.notices), out.notices


async def test_an_entry_planted_in_a_submodules_own_index_is_removed(world: World) -> None:
    project = _submodule(world)
    canary = Canary(world.root)
    attack = "cd vendor/lib && " + PLANTS["update-index"].format(config=canary.config)
    unsandboxed_control(world, attack, canary)  # git status at the top recurses into the submodule
    out = await run_bash(world, attack)
    assert "planted" in out.output, out.output
    assert _gitlinks(project / "vendor" / "lib") == [] and _gitlinks(project) == ["vendor/lib"]
    assert not canary.sung_after_git_status(project)
    assert any(REMOVED in n and "of the submodule at" in n for n in out.notices), out.notices


async def test_a_repository_put_where_a_submodule_has_no_directory_is_removed(
    world: World,
) -> None:
    project = _submodule(world)
    git(project, "submodule", "deinit", "-q", "-f", "vendor/lib")
    # no directory, nor its parent: the mounts cannot stub a path whose parent is missing
    # (tools.sandbox.gitguard), so this is the removal after the command
    shutil.rmtree(project / "vendor")
    canary = Canary(world.root)
    attack = (
        "mkdir -p vendor/lib && cd vendor/lib && git init -q && "
        "git -c user.name=n -c user.email=e@x commit -q "
        f"--allow-empty -m s && printf '{canary.config}' >> .git/config && echo planted"
    )
    unsandboxed_control(
        world, attack, canary
    )  # the index does not change, yet git status enters it
    out = await run_bash(world, attack)
    assert "planted" in out.output, out.output
    assert _gitlinks(project) == []
    assert not canary.sung_after_git_status(project)
    notice = "\n".join(out.notices)
    assert "Nerve removed the submodule entry vendor/lib/ from the git index" in notice, notice
    assert "another repository at that path" in notice


async def test_a_linked_worktree_has_its_own_index(world: World) -> None:
    project = _repo(world)
    git(project, "worktree", "add", "-q", ".nerve/worktrees/wt")
    wt = project / ".nerve" / "worktrees" / "wt"
    canary = Canary(world.root)
    await run_bash(world, "cd .nerve/worktrees/wt")  # the shell's directory persists
    out = await run_bash(world, PLANTS["add"].format(config=canary.config))
    assert "planted" in out.output and out.cwd == str(wt), out
    assert _gitlinks(wt) == []
    assert not canary.sung_after_git_status(wt)
    assert any(REMOVED in n for n in out.notices), out.notices


async def test_a_background_tasks_entry_is_removed_when_it_ends(world: World) -> None:
    project = _repo(world)
    canary = Canary(world.root)
    out = await run_bash(world, PLANTS["add"].format(config=canary.config), run_in_background=True)
    manager = get_manager(world.ctx())
    task = manager.get(out.extra["task_id"])
    assert task is not None
    assert await manager.wait(task.task_id, 30)
    assert _gitlinks(project) == []
    assert not canary.sung_after_git_status(project)
    assert any(REMOVED in n and "the background task added" in n for n in task.notes), task.notes


async def test_a_running_tasks_entry_is_removed_by_the_next_commands_end(world: World) -> None:
    project = _repo(world)
    canary = Canary(world.root)
    plant = PLANTS["add"].format(config=canary.config)
    out = await run_bash(
        world,
        f"{plant} && touch ready && until [ -e go ]; do sleep 0.05; done",
        run_in_background=True,
    )
    manager = get_manager(world.ctx())
    task = manager.get(out.extra["task_id"])
    assert task is not None
    for _ in range(600):
        if (project / "ready").exists() or task.status != "running":
            break
        await asyncio.sleep(0.05)
    assert (project / "ready").exists(), Path(task.output_path).read_text()
    out = await run_bash(world, "echo meanwhile")
    assert _gitlinks(project) == []
    assert any(
        REMOVED in n and "or another sandboxed command running meanwhile" in n for n in out.notices
    ), out.notices
    (project / "go").touch()
    assert await manager.wait(task.task_id, 30)
    assert not any("submodule" in n for n in task.notes)  # nothing was left to remove
    assert not canary.sung_after_git_status(project)


async def test_an_unchanged_index_runs_no_git(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    _submodule(world)
    # an index written in the last two seconds is read again each time (a second write in the
    # same clock tick would not show in its stat); the setup's is that fresh
    monkeypatch.setattr(gitlinks, "_RACY_NS", 0)
    await run_bash(world, "true")  # the first look reads both indexes
    calls: list[tuple[str, ...]] = []
    real = gitlinks._git

    def counting(repo: gitlinks._Repo, *args: str) -> bytes:
        calls.append(args)
        return real(repo, *args)

    monkeypatch.setattr(gitlinks, "_git", counting)
    out = await run_bash(world, "echo x > x.txt")
    assert out.exit_code == 0 and calls == []
    out = await run_bash(world, "git add x.txt")
    assert out.exit_code == 0 and calls == [("ls-files", "--stage", "-z")]  # after: it changed
