"""git never takes its configuration from a path the model could write without a prompt.

Real repositories in temporary folders: the session's own (``git init``), a nested one whose
``core.fsmonitor`` writes a canary, a bare repository planted as plain files, a ``.git`` file
pointing into the nested one, and a linked worktree. Every form that could point git at
another configuration asks with a safety check a classifier may approve; git where the
session's own repository is stays allowed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.bash.git import discover_repository
from permissions.bash.readonly import SAFE_ENV_VARS, safe_env_var
from permissions.rules import make_rule
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionMode,
    ReasonKind,
    RuleSource,
    Verdict,
)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "core.fsmonitor=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _plant_bare(path: Path, canary: Path) -> None:
    """A bare repository written as plain files (what a model with a file-writing tool can do);
    git's discovery takes it for a repository."""
    (path / "objects").mkdir(parents=True)
    (path / "refs" / "heads").mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text(
        f"[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = touch {canary}; false\n"
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "plain" / "deeper").mkdir(parents=True)
    sub = root / "sub"
    sub.mkdir()
    _git(sub, "init", "-q", "-b", "main")
    _git(sub, "config", "core.fsmonitor", f"touch {tmp_path / 'CANARY'}; false")
    _plant_bare(root / "bare", tmp_path / "CANARY_BARE")
    (root / "gf").mkdir()
    (root / "gf" / ".git").write_text("gitdir: ../sub/.git\n")
    return root


def _verdict(
    command: str, cwd: Path, *allow: str, mode: str = "default", also: Path | None = None
) -> Verdict:
    """The verdict in ``cwd``; ``also``: an additional working directory (so that reading a
    parent is not what asks)."""
    rules = tuple(make_rule(r, "allow", RuleSource.CLI) for r in allow)
    ctx = PermissionContext(
        mode=PermissionMode.parse(mode),
        rules=rules,
        cwd=cwd,
        home=cwd.parent / "home",
        additional_dirs=(also,) if also is not None else (),
    )
    return assess_bash(command, ctx).verdict


ASKS = {
    # where git runs: -C (also through wrappers and env -C), cd, a path to the program
    "-C nested repository": "git -C sub status",
    "-C into the nested repository's subtree": "git -C sub/.git/.. log",
    "-C twice": "git -C plain -C ../sub status",
    "-C planted bare repository": "git -C bare log",
    "-C below a planted bare repository": "git -C bare/refs log",
    "-C gitfile pointing elsewhere": "git -C gf log",
    "timeout wrapper": "timeout 5 git -C sub status",
    "nice wrapper": "nice git -C sub status",
    "command wrapper": "command git -C sub status",
    "absolute git": "/usr/bin/git -C sub status",
    "env -C": "env -C sub git status",
    "env --chdir=": "env --chdir=sub git status",
    "cd into nested": "cd sub && git status",
    "cd into bare": "cd bare && git log",
    "-C not known statically": 'git -C "$d" status',
    "option not known statically": "git $opts status",
    "xargs gives git its options": "echo '-C sub status' | xargs git",
    # which repository: --git-dir, --work-tree, --bare
    "--git-dir=": "git --git-dir=sub/.git log",
    "--git-dir value": "git --git-dir sub/.git log",
    "--work-tree": "git --work-tree=sub status",
    "--bare": "git --bare log",
    # configuration on the command line
    "-c fsmonitor": "git -c core.fsmonitor='touch x' status",
    "-c include file": "git -c include.path=./f log",
    "--config-env": "git --config-env=core.pager=PAGER_CMD log",
    "--exec-path": "git --exec-path=./bin log",
    # the environment, as a prefix
    "GIT_DIR": "GIT_DIR=sub/.git git status",
    "GIT_CONFIG_GLOBAL": "GIT_CONFIG_GLOBAL=./f git log",
    "GIT_CONFIG": "GIT_CONFIG=./f git log",
    "GIT_CONFIG_COUNT": (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=x git status"
    ),
    "GIT_CONFIG_PARAMETERS": "GIT_CONFIG_PARAMETERS=\"'core.pager'='x'\" git log",
    "HOME": "HOME=./dir git log",
    "XDG_CONFIG_HOME": "XDG_CONFIG_HOME=./dir git log",
    # ... through env
    "env HOME": "env HOME=. git log",
    "env -i GIT_DIR": "env -i GIT_DIR=sub/.git git status",
    "env XDG_CONFIG_HOME": "env XDG_CONFIG_HOME=./dir git log",
    "env -S": "env -S 'git -C sub status'",
    # ... through export, declare, a bare assignment before git (or after it, in a loop)
    "export HOME": "export HOME=.; git log",
    "export GIT_DIR": "export GIT_DIR=sub/.git && git status",
    "declare -x": "declare -x XDG_CONFIG_HOME=./dir; git log",
    "bare HOME=.;": "HOME=.; git status",
    "bare GIT_CONFIG_GLOBAL": "GIT_CONFIG_GLOBAL=./f; git log",
    "assignment after git": "git log; export HOME=./dir",
    # a repository planted by the same command (before, or concurrently with, git)
    "mkdir refs/objects then git -C": "mkdir -p new/refs new/objects && git -C new status",
    "git -C in the background of mkdir": "git -C new status & mkdir -p new/refs",
    "HEAD written by a redirect": "echo 'ref: refs/heads/main' > plain/HEAD; git -C plain log",
    "planted .git in a plain directory": "mkdir plain/.git && git -C plain log",
    "copied into the directory": "cp -r bare/. plain && git -C plain log",
    "moved into place": "mv bare newdir && git -C newdir log",
}


@pytest.mark.parametrize("command", list(ASKS.values()), ids=list(ASKS))
def test_git_that_could_read_another_configuration_asks(command: str, project: Path) -> None:
    v = _verdict(command, project)
    assert v.decision is Decision.ASK, v
    assert v.kind is ReasonKind.SAFETY, v
    assert v.safety is not None and v.safety.classifier_approvable


@pytest.mark.parametrize(
    "command",
    ["git -C sub status", "git -C bare log", "GIT_DIR=sub/.git git status", "HOME=.; git log"],
)
def test_an_allow_rule_does_not_cover_it(command: str, project: Path) -> None:
    v = _verdict(command, project, "Bash(git *)", "Bash(export *)")
    assert v.decision is Decision.ASK and v.kind is ReasonKind.SAFETY, v


def test_accept_edits_does_not_run_a_repository_planted_in_the_same_command(
    project: Path,
) -> None:
    command = (
        "mkdir -p evil/refs evil/objects && echo 'ref: refs/heads/main' > evil/HEAD && "
        "printf '[core]\\n\\tfsmonitor = touch CANARY\\n' > evil/config && git -C evil status"
    )
    v = _verdict(command, project, mode="acceptEdits")
    assert v.decision is Decision.ASK and v.kind is ReasonKind.SAFETY, v
    assert "could plant a repository" in v.reason


def test_the_messages_name_the_repository(project: Path) -> None:
    assert _verdict("git -C sub status", project).reason == (
        "git -C sub reads the configuration of another repository (sub/.git)"
    )
    assert "would use bare as a bare repository" in _verdict("git -C bare log", project).reason
    assert "follows the .git file in gf" in _verdict("git -C gf log", project).reason
    assert "GIT_DIR" in _verdict("GIT_DIR=x git status", project).reason
    assert "HOME" in _verdict("HOME=.; git status", project).reason
    assert "-c core.fsmonitor" in _verdict("git -c core.fsmonitor=x status", project).reason


ALLOWED = [
    "git status",
    "git log --oneline -n 5",
    "git diff --stat",
    "git -C plain status",
    "git -C plain/deeper log",
    "git -C plain/.. status",
    'git -C "" status',
    "git -C .git log",
    "timeout 5 git -C plain status",
    "LC_ALL=C git log",
    "git status && git log -n1 > /dev/null",
    "git log | head -5",
    "git show HEAD:README.md | wc -l",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_git_in_the_sessions_own_repository_stays_allowed(command: str, project: Path) -> None:
    v = _verdict(command, project)
    assert v.decision is Decision.ALLOW, v


def test_from_a_subdirectory_of_the_session_repository(project: Path) -> None:
    cwd = project / "plain"
    assert _verdict("git -C .. status", cwd, also=project).decision is Decision.ALLOW
    assert _verdict("git -C deeper log", cwd).decision is Decision.ALLOW
    v = _verdict("git -C ../sub log", cwd, also=project)
    assert v.decision is Decision.ASK and v.kind is ReasonKind.SAFETY


def test_outside_any_repository_git_reads_no_repository_config(tmp_path: Path) -> None:
    cwd = tmp_path / "loose"
    (cwd / "a").mkdir(parents=True)
    assert _verdict("git -C a status", cwd).decision is Decision.ALLOW
    assert _verdict("git status", cwd).decision is Decision.ALLOW


def test_a_linked_worktree_is_part_of_the_session_repository(project: Path) -> None:
    (project / "f").write_text("x\n")
    _git(project, "add", "f")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    wt = project / ".nerve" / "worktrees" / "wt"
    _git(project, "worktree", "add", "-q", "-b", "worktree-wt", str(wt))
    assert _verdict("git status", wt).decision is Decision.ALLOW
    assert _verdict("git -C ../../.. status", wt, also=project).decision is Decision.ALLOW
    assert _verdict("git -C .nerve/worktrees/wt log", project).decision is Decision.ALLOW
    v = _verdict("git -C ../../../sub status", wt, also=project)
    assert v.decision is Decision.ASK and v.kind is ReasonKind.SAFETY


def test_a_session_directory_that_is_a_planted_bare_repository_asks(project: Path) -> None:
    # The session runs in a subdirectory the model made look like a bare repository: git
    # would take it (and its config) before the real .git above.
    cwd = project / "plain"
    _plant_bare(cwd / "x", project / "C")  # not the cwd itself yet: still the session's
    assert _verdict("git status", cwd).decision is Decision.ALLOW
    (cwd / "HEAD").write_text("ref: refs/heads/main\n")
    (cwd / "refs").mkdir()
    (cwd / "objects").mkdir()
    v = _verdict("git status", cwd)
    assert v.decision is Decision.ASK and "bare repository" in v.reason, v


LAYOUTS = ["", "plain", "plain/deeper", "sub", "bare", "bare/refs", "gf", ".git", "sub/.git"]


@pytest.mark.parametrize("rel", LAYOUTS)
def test_discovery_agrees_with_git(rel: str, project: Path) -> None:
    """The static discovery finds the git directory git itself finds."""
    where = project / rel
    found = discover_repository(str(where))
    assert found is not None
    real = _git(where, "rev-parse", "--absolute-git-dir").strip()
    assert found.gitdir == os.path.realpath(real)


def test_no_git_environment_variable_is_a_safe_assignment() -> None:
    for name in ("GIT_DIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG", "GIT_CONFIG_COUNT", "GIT_PAGER"):
        assert not safe_env_var(name)
    for name in ("GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "HOME", "XDG_CONFIG_HOME", "PAGER"):
        assert not safe_env_var(name)
    assert not any(n.startswith("GIT_") or n in ("HOME", "XDG_CONFIG_HOME") for n in SAFE_ENV_VARS)
    assert safe_env_var("LC_ALL") and safe_env_var("NO_COLOR")


def test_the_check_only_looks_at_git(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No file-system look-up for commands without git (start-up and keystroke latency)."""
    calls: list[str] = []
    import permissions.bash.git as git_mod

    real = git_mod.discover_repository

    def spy(start: str, levels: list[str] | None = None) -> object:
        calls.append(start)
        return real(start, levels)

    monkeypatch.setattr("permissions.bash.effects.discover_repository", spy)
    _verdict("ls -la && cat README.md | grep x > out.txt", project)
    assert calls == []
    _verdict("git status && git log && git diff", project)
    assert len(calls) == 1  # the session's repository, once per command line
