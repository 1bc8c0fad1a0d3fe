"""Memory files: hierarchy, imports (bounded), dedupe by real path, code spans ignored."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_cli.customize.memory import MAX_IMPORT_DEPTH, load_memory_files, render_memory
from agent_cli.loop.system_prompt import build_system_prompt, gather_environment


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    (h / ".nerve").mkdir(parents=True)
    (h / ".claude").mkdir(parents=True)
    monkeypatch.delenv("NERVE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return h


def test_hierarchy_user_then_root_down_to_cwd(tmp_path: Path, home: Path) -> None:
    proj = tmp_path / "proj"
    sub = proj / "pkg" / "sub"
    sub.mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("user rule")
    (proj / "AGENTS.md").write_text("agents at root")
    (proj / "CLAUDE.md").write_text("claude at root")
    (proj / "CLAUDE.local.md").write_text("local at root")
    (sub / "CLAUDE.md").write_text("claude in sub")
    (proj / "pkg" / ".claude").mkdir()
    (proj / "pkg" / ".claude" / "CLAUDE.md").write_text("dot-claude in pkg")
    files = load_memory_files(sub, home=home)
    contents = [f.content.strip() for f in files]
    assert contents == [
        "user rule",
        "agents at root",
        "claude at root",
        "local at root",
        "dot-claude in pkg",
        "claude in sub",
    ]
    assert [f.level for f in files][:1] == ["user"]


def test_import_resolved_relative_and_not_loaded_twice(tmp_path: Path, home: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "AGENTS.md").write_text("shared agent rules")
    (proj / "CLAUDE.md").write_text("See @AGENTS.md and @docs/style.md.\n")
    (proj / "docs").mkdir()
    (proj / "docs" / "style.md").write_text("style: tabs")
    files = load_memory_files(proj, home=home)
    paths = [f.path.resolve() for f in files]
    assert paths.count((proj / "AGENTS.md").resolve()) == 1
    assert (proj / "docs" / "style.md").resolve() in paths
    style = next(f for f in files if f.path.name == "style.md")
    assert style.level == "import" and style.imported_from == proj / "CLAUDE.md"


def test_symlinked_claude_md_is_not_doubled(tmp_path: Path, home: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "AGENTS.md").write_text("once")
    os.symlink(proj / "AGENTS.md", proj / "CLAUDE.md")
    files = load_memory_files(proj, home=home)
    assert [f.content for f in files] == ["once"]


def test_imports_ignored_in_code_and_depth_bounded(tmp_path: Path, home: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "CLAUDE.md").write_text("`@nope.md` and\n```\n@nope2.md\n```\n@a0.md\n")
    (proj / "nope.md").write_text("NOPE")
    (proj / "nope2.md").write_text("NOPE2")
    for i in range(MAX_IMPORT_DEPTH + 3):
        (proj / f"a{i}.md").write_text(f"level {i} @a{i + 1}.md")
    files = load_memory_files(proj, home=home)
    names = [f.path.name for f in files]
    assert "nope.md" not in names and "nope2.md" not in names
    chain = [n for n in names if n.startswith("a")]
    assert chain == [f"a{i}.md" for i in range(MAX_IMPORT_DEPTH)]


def test_import_cycle_terminates(tmp_path: Path, home: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "CLAUDE.md").write_text("@x.md")
    (proj / "x.md").write_text("@CLAUDE.md")
    assert [f.path.name for f in load_memory_files(proj, home=home)] == ["CLAUDE.md", "x.md"]


def test_html_comments_stripped_and_render(tmp_path: Path, home: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "CLAUDE.md").write_text("<!-- private note -->\nUse pytest.\n")
    files = load_memory_files(proj, home=home)
    text = render_memory(files)
    assert "private note" not in text
    assert "Use pytest." in text and str(proj / "CLAUDE.md") in text


def test_system_prompt_has_env_git_and_memory(tmp_path: Path, home: Path) -> None:
    proj = tmp_path / "repo"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "feature-x"], cwd=proj, check=True)
    (proj / "AGENTS.md").write_text("Always run make lint.")
    env = gather_environment(proj)
    assert env.is_git and env.git_branch == "feature-x"
    assert "AGENTS.md" in (env.git_status or "")
    prompt = build_system_prompt(
        env, tool_descriptions=[("Read", "Read a file.\nMore.")], home=home
    )
    assert f"Working directory: {proj}" in prompt
    assert "Current git branch: feature-x" in prompt
    assert "- Read: Read a file." in prompt and "More." not in prompt
    assert "Always run make lint." in prompt


def test_system_prompt_outside_git(tmp_path: Path, home: Path) -> None:
    env = gather_environment(tmp_path)
    prompt = build_system_prompt(env, home=home)
    assert "Is directory a git repo: no" in prompt
    assert "Current git branch" not in prompt
