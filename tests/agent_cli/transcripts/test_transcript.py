"""Transcripts: envelope fields, slug, append-only durability, torn lines, sidechains."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_cli.transcripts.transcript import (
    TranscriptReader,
    TranscriptWriter,
    list_sessions,
    project_dir,
    project_slug,
)


@pytest.fixture(autouse=True)
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("NERVE_DATA_DIR", str(d))
    return d


def test_slug_matches_reference() -> None:
    assert project_slug("/home/a/my_app") == "-home-a-my-app"
    long = "/x" * 150
    s = project_slug(long)
    assert len(s) > 200 and s.startswith("-x-x") and s[200] == "-"
    assert project_slug(long) == s  # stable


def test_envelope_and_chain(tmp_path: Path, data: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path, git_branch="main")
    u1 = w.user({"role": "user", "content": "hi"})
    u2 = w.assistant({"role": "assistant", "content": [{"type": "text", "text": "yo"}]})
    w.meta("permission-mode", mode="acceptEdits")
    w.close()
    assert w.path.parent == project_dir(tmp_path)
    lines = [json.loads(x) for x in w.path.read_text().splitlines()]
    assert lines[0]["uuid"] == u1 and lines[0]["parentUuid"] is None
    assert lines[1]["uuid"] == u2 and lines[1]["parentUuid"] == u1
    for key in ("sessionId", "timestamp", "cwd", "version", "gitBranch", "type", "message"):
        assert key in lines[0]
    assert lines[0]["gitBranch"] == "main" and lines[0]["isSidechain"] is False
    r = TranscriptReader.load(w.path)
    assert r.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "yo"}]},
    ]
    assert r.permission_mode == "acceptEdits" and r.last_uuid == u2


def test_torn_last_line_and_garbage_are_skipped_with_warnings(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    w.user({"role": "user", "content": "one"})
    w.close()
    with open(w.path, "ab") as fh:
        fh.write(b"this is not json\n")
        fh.write(b'{"type": "user", "message": {"role": "user", "content": "tw')
    r = TranscriptReader.load(w.path)
    assert [m["content"] for m in r.messages] == ["one"]
    assert any("torn last line" in x for x in r.warnings)
    assert any("unreadable line" in x for x in r.warnings)
    # Appending after a torn tail starts on a fresh line: the new record survives.
    w2 = TranscriptWriter(w.path, session_id=w.session_id, cwd=tmp_path, last_uuid=r.last_uuid)
    w2.user({"role": "user", "content": "two"})
    w2.close()
    r2 = TranscriptReader.load(w.path)
    assert [m["content"] for m in r2.messages] == ["one", "two"]


def test_unknown_record_types_warned(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    w.user({"role": "user", "content": "one"})
    w.meta("from-the-future", x=1)
    w.close()
    r = TranscriptReader.load(w.path)
    assert any("from-the-future" in x for x in r.warnings)
    assert len(r.messages) == 1


def test_every_record_type_round_trips(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    w.user({"role": "user", "content": "first prompt"})
    w.system("local_command", "ran ls")
    w.meta("session-rule", behavior="allow", rule="Bash(npm test *)")
    w.meta("read-file-state", files=[{"path": "/a", "content_hash": "h", "mtime_ns": 1}])
    w.meta("background-tasks", tasks=[{"id": "b1", "command": "sleep 1", "status": "running"}])
    w.meta("custom-title", customTitle="My work")
    w.close()
    r = TranscriptReader.load(w.path)
    assert r.session_rules == [{"behavior": "allow", "rule": "Bash(npm test *)"}]
    assert r.read_file_state[0]["path"] == "/a"
    assert r.background_tasks[0]["id"] == "b1"
    assert r.title == "My work" and r.first_prompt() == "first prompt"
    assert r.warnings == []


def test_sidechain_file_marked(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    side = w.sidechain("agent42")
    side.user({"role": "user", "content": "sub task"})
    side.close()
    w.close()
    assert side.path == w.path.with_suffix("") / "subagents" / "agent-agent42.jsonl"
    rec = json.loads(side.path.read_text())
    assert rec["isSidechain"] is True and rec["agentId"] == "agent42"
    assert rec["sessionId"] == w.session_id
    assert side.session_dir == w.session_dir


def test_list_sessions_newest_first(tmp_path: Path) -> None:
    a = TranscriptWriter.for_session(tmp_path)
    a.user({"role": "user", "content": "a"})
    a.close()
    b = TranscriptWriter.for_session(tmp_path)
    b.user({"role": "user", "content": "b"})
    b.close()
    os.utime(a.path, (1, 1))
    assert [s.session_id for s in list_sessions(tmp_path)] == [b.session_id, a.session_id]
