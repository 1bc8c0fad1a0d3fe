"""FIFOs and devices where users' files go are refused by type, before any open (never hang).

A FIFO with no writer blocks a plain ``open()`` forever and ``/dev/zero`` never ends; each test
would hang (and hit its timeout) if the loader opened the file the ordinary way.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.customize.agents import load_agent_definitions
from agent_cli.customize.commands import load_prompt_commands
from agent_cli.customize.files import NotRegularFile, iter_markdown, read_user_file
from agent_cli.customize.memory import load_memory_files
from agent_cli.customize.memory_edit import append_note
from agent_cli.customize.rules import load_rules

pytestmark = pytest.mark.timeout(20)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("NERVE_CONFIG_DIR", str(home / ".nerve"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    return home


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def test_read_user_file_refuses_fifo_and_devices(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFile, match="FIFO"):
        read_user_file(_fifo(tmp_path / "pipe.md"))
    with pytest.raises(NotRegularFile, match="character device"):
        read_user_file(Path("/dev/zero"))
    link = tmp_path / "zero.md"
    link.symlink_to("/dev/zero")
    with pytest.raises(NotRegularFile, match="character device"):
        read_user_file(link)
    with pytest.raises(NotRegularFile, match="directory"):
        read_user_file(tmp_path)


def test_read_user_file_caps_and_replaces_bad_bytes(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"\xef\xbb\xbfok \xff" + b"x" * 100)
    text, truncated = read_user_file(path, max_bytes=10)
    assert text == "ok \ufffdxxx" and truncated


def test_memory_files_that_are_fifos_or_devices_are_skipped(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    _fifo(project / "CLAUDE.md")
    (project / "AGENTS.md").symlink_to("/dev/zero")
    (project / "CLAUDE.local.md").write_text("LOCAL @imported.md\n")
    _fifo(project / "imported.md")
    files = load_memory_files(project, home=home)
    assert [f.path.name for f in files] == ["CLAUDE.local.md"]


def test_rules_commands_skills_and_agents_fifos_are_warned_and_skipped(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "project"
    _fifo(project / ".claude/rules/pipe.md")
    _fifo(project / ".claude/commands/pipe.md")
    _fifo(project / ".claude/skills/piped/SKILL.md")
    _fifo(project / ".claude/agents/pipe.md")
    (project / ".claude/commands/ok.md").write_text("fine\n")

    rules, rule_warnings = load_rules(project, home)
    assert rules == [] and len(rule_warnings) == 1 and "FIFO" in rule_warnings[0]

    commands = load_prompt_commands(project, home)
    assert set(commands.commands) == {"ok"}
    assert sorted("FIFO" in w for w in commands.warnings) == [True, True]

    _, agent_warnings = load_agent_definitions(project, home)
    assert len(agent_warnings) == 1 and "FIFO" in agent_warnings[0]


def test_iter_markdown_names_special_entries_but_never_follows_dir_links(tmp_path: Path) -> None:
    folder = tmp_path / "commands"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.md").write_text("a")
    (folder / "loop").symlink_to(folder)  # a loop, never descended into
    _fifo(folder / "b.md")
    assert [p.relative_to(folder).as_posix() for p in iter_markdown(folder)] == ["b.md", "sub/a.md"]


def test_a_note_never_writes_into_a_fifo(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFile):
        append_note(_fifo(tmp_path / "AGENTS.md"), "remember this")
