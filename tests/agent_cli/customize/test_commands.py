"""Custom commands and skills: where they are found, what their frontmatter means."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.customize.commands import load_prompt_commands
from tests.agent_cli.customize.showcase import make_showcase


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("NERVE_CONFIG_DIR", str(home / ".nerve"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    return home


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_showcase_commands_from_a_subdirectory(tmp_path: Path, home: Path) -> None:
    project = make_showcase(tmp_path / "project")
    found = load_prompt_commands(project / "src", home)
    names = sorted(found.commands)
    assert names == ["commit", "deploy", "frontend:component", "pr-review", "release-notes"]
    review = found.get("PR-Review")  # typed names are matched lower-cased
    assert review is not None
    assert review.description == "Review a pull request against the project checklist"
    assert review.argument_hint == "[pr-number]"
    assert review.allowed_tools == ("Read", "Grep", "Bash(git:*)", "Bash(gh pr view:*)")
    assert (review.level, review.kind, review.source) == ("project", "command", "project")
    component = found.get("frontend:component")
    assert component is not None and component.source == "project:frontend"
    assert component.model == "haiku" and component.argument_hint == "<ComponentName>"
    commit = found.get("commit")
    assert commit is not None and commit.argument_hint == "[message] [--amend]"
    deploy = found.get("deploy")
    assert deploy is not None and not deploy.model_invocable
    assert "deploy" not in [c.name for c in found.model_commands()]
    skill = found.get("release-notes")
    assert skill is not None and skill.kind == "skill"
    assert skill.skill_dir == project / ".claude/skills/release-notes"
    assert skill.allowed_tools == ("Bash(python3:*)",)


def test_broken_frontmatter_is_a_warning_naming_file_and_line(tmp_path: Path, home: Path) -> None:
    project = make_showcase(tmp_path / "project", git=False)
    found = load_prompt_commands(project, home)
    assert found.get("broken") is None
    [warning] = [w for w in found.warnings if "broken.md" in w]
    assert f"{project}/.claude/commands/broken.md:2:" in warning
    assert "invalid YAML" in warning and "not offered" in warning


def test_precedence_user_project_nerve_and_skills_over_commands(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    _write(home / ".claude/commands/shared.md", "---\ndescription: user\n---\nU")
    _write(home / ".claude/commands/mine.md", "# My own command\n\nbody")
    _write(project / ".claude/commands/shared.md", "---\ndescription: claude\n---\nC")
    _write(project / ".nerve/commands/shared.md", "---\ndescription: nerve\n---\nN")
    _write(project / ".claude/commands/both.md", "---\ndescription: command\n---\nc")
    _write(project / ".claude/skills/both/SKILL.md", "---\ndescription: skill\n---\ns")
    _write(project / ".claude/skills/dir-name/SKILL.md", "---\nname: Named\n---\nbody")
    _write(project / ".claude/skills/hidden/SKILL.md", "---\nuser-invocable: false\n---\nh")
    _write(project / ".claude/commands/has space.md", "x")
    found = load_prompt_commands(project, home)
    assert found.commands["shared"].description == "nerve"
    mine = found.commands["mine"]
    assert (mine.level, mine.description) == ("user", "My own command")  # first line of body
    assert found.commands["both"].kind == "skill"
    assert "named" in found.commands and "dir-name" not in found.commands
    assert "hidden" not in [c.name for c in found.user_commands()]
    assert "hidden" in [c.name for c in found.model_commands()]
    assert any("'has space' is not a usable /name" in w for w in found.warnings)


def test_untrusted_project_commands_keep_their_allowed_tools_unapplied(
    tmp_path: Path, home: Path
) -> None:
    project = make_showcase(tmp_path / "project", git=False)
    _write(home / ".claude/commands/me.md", "---\nallowed-tools: Bash(ls:*)\n---\nx")
    found = load_prompt_commands(project, home, project_trusted=False)
    review = found.get("pr-review")
    assert review is not None and not review.trusted and review.allowed_tools
    me = found.get("me")
    assert me is not None and me.trusted  # the user's own files are always theirs
