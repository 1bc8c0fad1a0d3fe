"""Resume from the last compact_boundary: found from the end, false hits refused, state kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.session.resume import repair_for_resume
from agent_cli.transcripts.tail import find_last_boundary, hint_path, prefix_state, write_boundary
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter


def _writer(tmp_path: Path) -> TranscriptWriter:
    return TranscriptWriter(tmp_path / "s.jsonl", session_id="sess", cwd=tmp_path)


def _boundary(w: TranscriptWriter, summary: str) -> None:
    write_boundary(w, "manual", 1234)
    w.user({"role": "user", "content": summary}, isCompactSummary=True)


def test_no_boundary_reads_everything(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    w.user({"role": "user", "content": "hi"})
    w.close()
    assert find_last_boundary(w.path) == 0
    assert TranscriptReader.load(w.path).compacted is False
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert find_last_boundary(empty) == 0


def _compacted_twice(tmp_path: Path) -> TranscriptWriter:
    w = _writer(tmp_path)
    w.meta("session-rule", behavior="allow", rule="Bash(ls:*)")
    w.meta("permission-mode", mode="acceptEdits")
    w.user({"role": "user", "content": "old prompt"})
    _boundary(w, "first summary")
    w.meta("session-rule", behavior="allow", rule="Bash(git:*)")
    w.meta("session-rule", behavior="allow", rule="Bash(ls:*)", action="remove")
    w.user({"role": "user", "content": "middle prompt"})
    _boundary(w, "second summary")
    w.user({"role": "user", "content": 'quoting {"subtype":"compact_boundary"} here'})
    w.close()
    with open(w.path, "ab") as fh:
        fh.write(b'{"type":"system","subtype":"compact_boundary","torn')  # a torn last line
    return w


def _check(r: TranscriptReader) -> None:
    assert r.compacted and r.session_id == "sess"
    assert r.messages[0]["content"] == "second summary"
    assert "middle prompt" not in json.dumps(r.messages)
    assert r.permission_mode == "acceptEdits"
    assert r.session_rules == [{"behavior": "allow", "rule": "Bash(git:*)"}]
    first = repair_for_resume(r, None)[0]["content"]  # the summary and the next prompt, merged
    assert first[0] == {"type": "text", "text": "second summary"}


def test_resume_seeks_to_the_noted_last_boundary_and_keeps_the_state(tmp_path: Path) -> None:
    w = _compacted_twice(tmp_path)
    start = find_last_boundary(w.path)
    line = w.path.read_bytes()[start:].split(b"\n")[0]
    record = json.loads(line)
    assert record["subtype"] == "compact_boundary" and record["parentUuid"] is None
    assert record["compactMetadata"] == {"trigger": "manual", "preTokens": 1234}
    assert "first summary" not in w.path.read_bytes()[start:].decode()
    _check(TranscriptReader.load(w.path))


def test_a_missing_or_wrong_note_reads_from_the_start_with_the_same_result(
    tmp_path: Path,
) -> None:
    w = _compacted_twice(tmp_path)
    hint = hint_path(w.path)
    for bad in ("12", "not a number", str(w.path.stat().st_size + 10)):
        hint.write_text(bad)  # inside a line, garbage, past the end
        assert find_last_boundary(w.path) == 0
        _check(TranscriptReader.load(w.path))
    hint.unlink()
    _check(TranscriptReader.load(w.path))
    # A note left at the first boundary (another program compacted later): still right.
    text = w.path.read_bytes()
    first = text.rfind(b"\n", 0, text.index(b'"compact_boundary"')) + 1
    hint.write_text(str(first))
    assert find_last_boundary(w.path) == first
    _check(TranscriptReader.load(w.path))


def test_prefix_state_parses_only_state_lines_and_keeps_the_last_snapshot(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    w.user({"role": "user", "content": "first"})
    for i in range(3):
        w.meta("read-file-state", files=[{"path": f"/f{i}", "content_hash": "h", "mtime_ns": i}])
        w.meta("background-tasks", tasks=[{"task_id": f"b{i}", "status": "done"}])
        w.user({"role": "user", "content": 'mentions "type":"session-rule" in passing'})
    end = w.path.stat().st_size
    w.meta("permission-mode", mode="plan")  # after ``end``: not part of the prefix
    w.close()
    first, state = prefix_state(w.path, end)
    assert first is not None and first["message"]["content"] == "first"
    kinds = [r["type"] for r in state]
    assert kinds == ["background-tasks", "background-tasks", "read-file-state", "background-tasks"]
    assert state[2]["files"][0]["path"] == "/f2"


def test_hits_across_block_edges_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_cli.transcripts.tail as tail

    w = _writer(tmp_path)
    for i in range(40):
        w.meta("session-rule", behavior="allow", rule=f"Bash(tool{i}:*)")
        w.user({"role": "user", "content": f"prompt {i} " + "x" * (i * 7)})
    _boundary(w, "the summary")
    w.close()
    full_rules = TranscriptReader.load(w.path).session_rules
    for block in (37, 64, 101):  # block edges fall inside markers and lines
        monkeypatch.setattr(tail, "_BLOCK", block)
        monkeypatch.setattr(tail, "_STEP", 13)
        r = TranscriptReader.load(w.path)
        assert r.compacted and r.messages[0]["content"] == "the summary"
        assert r.session_rules == full_rules and len(full_rules) == 40


def test_a_look_alike_after_the_last_snapshot_does_not_hide_it(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    w.meta("permission-mode", mode="acceptEdits")
    tool = {"type": "tool_use", "id": "t", "name": "Write", "input": {"type": "permission-mode"}}
    w.assistant({"role": "assistant", "content": [tool]})
    _boundary(w, "summary")
    w.close()
    assert TranscriptReader.load(w.path).permission_mode == "acceptEdits"
