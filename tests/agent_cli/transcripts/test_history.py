"""Prompt history file: per project, newest first, bounded, tolerant of bad lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.transcripts.history import PromptHistory, default_history_path


def test_per_project_newest_first_and_folded(tmp_path: Path) -> None:
    path = tmp_path / "h" / "history.jsonl"
    a, b = PromptHistory("/p/a", path), PromptHistory("/p/b", path)
    for text in ("one", "two", "two", "three"):
        a.append(text)
    b.append("other project")
    a.append("   ")  # blank prompts are not history
    assert PromptHistory("/p/a", path).entries() == ["three", "two", "one"]
    assert PromptHistory("/p/b", path).entries() == ["other project"]
    rec = json.loads(path.read_text().splitlines()[0])
    assert rec["display"] == "one" and rec["project"] == "/p/a"
    assert isinstance(rec["timestamp"], int) and rec["timestamp"] > 1_600_000_000_000


def test_bad_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    good = json.dumps({"display": "ok", "timestamp": 1, "project": "/x"})
    path.write_text(f'{good}\nnot json\n[1, 2]\n{{"display": 5, "project": "/x"}}\n{{"disp')
    assert PromptHistory("/x", path).entries() == ["ok"]


def test_bounded(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    h = PromptHistory("/x", path, max_entries=10)
    for i in range(25):
        h.append(f"p{i}")
    assert len(path.read_text().splitlines()) <= 20
    assert PromptHistory("/x", path, max_entries=10).entries()[:3] == ["p24", "p23", "p22"]


def test_unwritable_location_does_not_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    h = PromptHistory("/x", blocker / "sub" / "history.jsonl")
    h.append("lost")  # the directory cannot be created: nothing stored, no exception
    assert h.entries() == []


def test_default_path_follows_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path))
    assert default_history_path() == tmp_path / "history.jsonl"
