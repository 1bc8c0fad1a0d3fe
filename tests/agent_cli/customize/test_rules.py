"""Rules files: unconditional ones join the memory files, ``paths:`` ones attach on a read."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.customize.memory import load_memory_files, render_memory
from agent_cli.customize.rules import PathRules, glob_to_regex, load_rules
from tests.agent_cli.customize.showcase import make_showcase


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("NERVE_CONFIG_DIR", str(home / ".nerve"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    return home


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("src/api/**/*.ts", "src/api/v1/users.ts", True),
        ("src/api/**/*.ts", "src/api/users.ts", True),
        ("src/api/**/*.ts", "lib/src/api/users.ts", False),
        ("src/*.py", "src/a/b.py", False),
        ("*.md", "docs/deep/readme.md", True),  # no slash: a name at any depth
        ("**/*.{test,spec}.ts", "a/b.spec.ts", True),
        ("**/*.{test,spec}.ts", "a/b.ts", False),
        ("./docs/", "docs/x/y.md", True),
        ("/src/?.py", "src/a.py", True),
    ],
)
def test_globs(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_to_regex(pattern).fullmatch(path)) is hit


def test_nested_rules_load_and_only_unconditional_ones_are_memory(
    tmp_path: Path, home: Path
) -> None:
    project = make_showcase(tmp_path / "project")
    (home / ".claude/rules").mkdir(parents=True)
    (home / ".claude/rules/mine.md").write_text("USER-RULE\n")
    rules, warnings = load_rules(project / "src", home)
    assert warnings == []
    assert [(r.path.name, r.level, r.paths) for r in rules] == [
        ("mine.md", "user", ()),
        ("react.md", "project", ("src/components/**/*.tsx",)),
        ("testing.md", "project", ()),
    ]
    files = load_memory_files(project / "src", home=home)
    names = [(f.path.name, f.level) for f in files]
    assert names == [
        ("mine.md", "user_rule"),
        ("CLAUDE.md", "project"),
        ("testing.md", "project_rule"),
    ]
    rendered = render_memory(files)
    assert "RULE-UNCONDITIONAL-MARKER" in rendered and "USER-RULE" in rendered
    assert "RULE-REACT-MARKER" not in rendered
    assert "project rules, checked into the codebase" in rendered


def test_broken_rule_frontmatter_is_reported_through_memory_loading(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "p"
    (project / ".claude/rules").mkdir(parents=True)
    (project / ".claude/rules/bad.md").write_text("---\npaths:\n\t- src/**\n---\nX\n")
    warnings: list[str] = []
    assert load_memory_files(project, home=home, warnings=warnings) == []
    assert len(warnings) == 1 and "bad.md:" in warnings[0] and "invalid YAML" in warnings[0]


def test_path_rules_attach_once_per_agent(tmp_path: Path, home: Path) -> None:
    project = make_showcase(tmp_path / "project")
    provider = PathRules(load_rules(project, home)[0])
    button = project / "src/components/Button.tsx"
    [text] = provider.on_read(button, None)
    assert "RULE-REACT-MARKER" in text and str(button) in text
    assert provider.on_read(button, None) == []  # once for the main agent
    assert len(provider.on_read(button, "agent-1")) == 1  # and once for each sub-agent
    assert provider.on_read(project / "src/app.py", None) == []
    assert provider.on_read(tmp_path / "elsewhere/src/components/X.tsx", None) == []
    provider.forget()
    assert len(provider.on_read(button, None)) == 1
