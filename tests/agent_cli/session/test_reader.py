"""Reading damaged transcripts: torn, garbage, unknown, empty; repairs; forks; sidechains."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_cli.session.resume import (
    RESUME_INTERRUPTED,
    SessionError,
    copy_for_fork,
    find_session,
    repair_for_resume,
)
from agent_cli.testing.checks import check_request
from agent_cli.transcripts.transcript import (
    TranscriptReader,
    TranscriptWriter,
    list_sessions,
    project_dir,
)
from tests.agent_cli.session.conftest import records


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _asst(*blocks: dict) -> dict:
    return {"role": "assistant", "content": list(blocks)}


def _call(tid: str, cmd: str = "ls") -> dict:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}


def _result(tid: str, text: str = "ok") -> dict:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}],
    }


def _valid(messages: list[dict]) -> list[str]:
    return check_request({"model": "m", "max_tokens": 1, "messages": messages})


def _write(tmp_path: Path, *messages: dict) -> TranscriptWriter:
    w = TranscriptWriter.for_session(tmp_path)
    for m in messages:
        (w.user if m["role"] == "user" else w.assistant)(m)
    return w


def test_torn_tail_and_garbage_lines_skipped_and_writer_starts_fresh(tmp_path: Path) -> None:
    w = _write(tmp_path, _user("one"), _asst({"type": "text", "text": "two"}))
    w.close()
    with open(w.path, "ab") as fh:
        fh.write(b"\x00\x00\x00\x00\n")  # a zero-filled block, as some filesystems leave
        fh.write(b"\xff\xfe not utf-8\n")
        fh.write(b"[1, 2, 3]\n")
        fh.write(b'{"type": 7}\n')
        fh.write(b"[" * 100_000 + b"\n")  # nesting deep enough to break the decoder
        fh.write(b'{"type": "user", "message": {"role": "user", "content": "thr')
    r = TranscriptReader.load(w.path)
    assert [m["content"] for m in r.messages][:1] == ["one"] and len(r.messages) == 2
    assert sum("unreadable line" in x for x in r.warnings) == 3
    assert sum("not a record" in x for x in r.warnings) == 2
    assert any(":8: skipped torn last line" in x for x in r.warnings)
    w2 = TranscriptWriter(w.path, session_id=w.session_id, cwd=tmp_path, last_uuid=r.last_uuid)
    new = w2.user(_user("three"))
    w2.close()
    last = w.path.read_bytes().splitlines()[-1]
    assert json.loads(last)["uuid"] == new  # on its own line, not glued to the torn one
    r2 = TranscriptReader.load(w.path)
    assert [m["content"] for m in r2.messages] == [
        "one",
        [{"type": "text", "text": "two"}],
        "three",
    ]
    assert r2.records[-1]["parentUuid"] == r.last_uuid


def test_malformed_messages_are_skipped_not_fatal(tmp_path: Path) -> None:
    w = _write(tmp_path, _user("ok"))
    w.append("user", {"message": "not a dict"})
    w.append("assistant", {"message": {"role": "assistant", "content": [{"type": "tool_use"}]}})
    w.append("user", {"message": {"role": "user", "content": [{"type": "tool_result"}]}})
    w.append("user", {"message": {"role": "user", "content": 42}})
    w.close()
    r = TranscriptReader.load(w.path)
    assert r.messages == [_user("ok")]
    assert sum("malformed message" in x for x in r.warnings) == 4
    repaired = repair_for_resume(r, None)
    # Private keys (a prompt's ``_uuid``, for /rewind) are the loop's own, never sent.
    assert [{k: v for k, v in m.items() if not k.startswith("_")} for m in repaired] == [
        _user("ok")
    ]


def test_unknown_record_types_are_skipped_and_the_session_resumes(tmp_path: Path) -> None:
    w = _write(tmp_path, _user("one"))
    w.meta("queue-operation", operation="enqueue")
    w.append("hologram", {"message": {"role": "user", "content": "not for us"}})
    w.assistant(_asst({"type": "text", "text": "two"}))
    w.close()
    r = TranscriptReader.load(w.path)
    assert [m["role"] for m in r.messages] == ["user", "assistant"]
    assert {x.split(": ", 1)[1] for x in r.warnings} == {
        "skipped records of unknown type 'hologram'",
        "skipped records of unknown type 'queue-operation'",
    }


@pytest.mark.parametrize("content", [b"", b"garbage\n\x00\x01 more garbage", b"\n\n\n"])
def test_empty_or_garbage_file(tmp_path: Path, content: bytes) -> None:
    """--continue passes over it (it is no conversation); --resume ID gives an empty one."""
    older = _write(tmp_path, _user("the real conversation"))
    older.close()
    os.utime(older.path, (1, 1))
    bad = project_dir(tmp_path) / "bbbbbbbb-0000-4000-8000-000000000000.jsonl"
    bad.write_bytes(content)
    assert list_sessions(tmp_path)[0].path == bad  # it is the newest file
    assert find_session(tmp_path, None) == older.path
    assert find_session(tmp_path, "bbbb") == bad
    r = TranscriptReader.load(bad)
    assert r.messages == [] and r.session_id is None
    assert any("no readable messages" in x for x in r.warnings)
    assert repair_for_resume(r, None) == []


def test_continue_without_any_conversation_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="No previous conversation"):
        find_session(tmp_path, None)
    project_dir(tmp_path).mkdir(parents=True)
    (project_dir(tmp_path) / "x.jsonl").write_bytes(b"")
    with pytest.raises(SessionError, match="No previous conversation"):
        find_session(tmp_path, None)
    with pytest.raises(SessionError, match="No session 'zz'"):
        find_session(tmp_path, "zz")


def test_resume_id_prefix_exact_and_ambiguous(tmp_path: Path) -> None:
    d = project_dir(tmp_path)
    d.mkdir(parents=True)
    for name in ("abc1", "abc2", "abc"):
        (d / f"{name}.jsonl").write_text(json.dumps({"type": "user", "message": _user(name)}))
    assert find_session(tmp_path, "abc1").stem == "abc1"
    assert find_session(tmp_path, "abc").stem == "abc"  # an exact id is never ambiguous
    (d / "abc.jsonl").unlink()
    with pytest.raises(SessionError, match="ambiguous"):
        find_session(tmp_path, "abc")


def test_repair_answers_the_tail_once_and_records_it(tmp_path: Path) -> None:
    w = _write(tmp_path, _user("go"), _asst(_call("a"), _call("b"), _call("c")), _result("a", "A"))
    r = TranscriptReader.load(w.path)
    fixed = repair_for_resume(r, w)
    w.close()
    assert _valid(fixed) == []
    assert [b["tool_use_id"] for b in fixed[2]["content"]] == ["a", "b", "c"]
    assert fixed[2]["content"][0]["content"] == "A"
    for b in fixed[2]["content"][1:]:
        assert b["is_error"] is True and b["content"] == RESUME_INTERRUPTED
    last = records(w.path)[-1]
    assert last["interrupted"] is True and last["parentUuid"] == r.last_uuid
    # The file now tells the whole story: a second resume repairs nothing and writes nothing.
    r2 = TranscriptReader.load(w.path)
    size = w.path.stat().st_size
    w2 = TranscriptWriter(w.path, session_id=w.session_id, cwd=tmp_path, last_uuid=r2.last_uuid)
    assert repair_for_resume(r2, w2) == fixed
    w2.close()
    assert w.path.stat().st_size == size


def test_a_gap_in_the_middle_is_answered_in_memory(tmp_path: Path) -> None:
    # The result line of the first call was lost (corruption); the conversation went on.
    w = _write(
        tmp_path,
        _user("go"),
        _asst(_call("a")),
        _user("and now?"),
        _asst(_call("b")),
        _result("b"),
        _asst({"type": "text", "text": "done"}),
    )
    w.close()
    r = TranscriptReader.load(w.path)
    fixed = repair_for_resume(r, None)
    assert _valid(fixed) == []
    assert fixed[2]["content"][0]["tool_use_id"] == "a"
    assert fixed[2]["content"][0]["is_error"] is True


def test_every_record_type_is_restored(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path, git_branch="dev")
    w.user({"role": "user", "content": "<bash-input>ls</bash-input>"}, isMeta=True)
    w.user(_user("fix the bug"))
    w.assistant(_asst({"type": "text", "text": "looking"}, _call("t1")))
    w.user(_result("t1"), toolUseResult={"tool_use_id": "t1", "output": {"stdout": "ok"}})
    w.system("local_command", "ran /help", level="info")
    w.meta("permission-mode", mode="plan")
    w.meta("permission-mode", mode="acceptEdits")
    w.meta("session-rule", behavior="allow", rule="Bash(npm test *)")
    w.meta("session-rule", behavior="deny", rule="Bash(rm *)")
    w.meta("session-rule", behavior="allow", rule="Bash(npm test *)")  # duplicate: once
    w.meta("session-rule", behavior="deny", rule="Bash(rm *)", action="remove")
    w.meta("read-file-state", files=[{"path": "/old", "content_hash": "h0", "mtime_ns": 1}])
    w.meta("read-file-state", files=[{"path": "/a", "content_hash": "h", "mtime_ns": 2}])
    w.meta("background-tasks", tasks=[{"task_id": "b1", "command": "sleep 9", "status": "running"}])
    w.meta("background-tasks", tasks=[{"task_id": "b2", "command": "make", "status": "completed"}])
    w.meta("summary", summary="old title")
    w.meta("custom-title", customTitle="My work")
    w.meta("session-meta", note="x")
    w.close()
    r = TranscriptReader.load(w.path)
    assert r.warnings == []
    assert [m["role"] for m in r.messages] == ["user", "user", "assistant", "user"]
    assert [x["type"] for x in r.records][-1] == "system"
    assert r.last_uuid == r.records[-1]["uuid"]  # a resume chains after the system record
    assert r.permission_mode == "acceptEdits"
    assert r.session_rules == [{"behavior": "allow", "rule": "Bash(npm test *)"}]
    assert r.read_file_state == [{"path": "/a", "content_hash": "h", "mtime_ns": 2}]
    assert [t["task_id"] for t in r.background_tasks] == ["b1", "b2"]
    assert r.title == "My work"
    assert r.first_prompt() == "fix the bug"  # the injected !ls note is not the title
    assert r.records[3]["toolUseResult"] == {"tool_use_id": "t1", "output": {"stdout": "ok"}}
    assert r.records[1]["gitBranch"] == "dev"


def test_fork_copies_everything_and_leaves_the_original_alone(tmp_path: Path) -> None:
    w = _write(tmp_path, _user("go"), _asst(_call("a")))
    w.user(_result("a"), toolUseResult={"tool_use_id": "a", "output": {"stdout": "x"}})
    w.user(_user("<system-reminder>x</system-reminder>"), isMeta=True)
    w.meta("session-rule", behavior="allow", rule="Read")
    w.meta("read-file-state", files=[{"path": "/a", "content_hash": "h", "mtime_ns": 2}])
    w.meta("custom-title", customTitle="T")
    w.close()
    before = w.path.read_bytes()
    src = TranscriptReader.load(w.path)
    fork = TranscriptWriter.for_session(tmp_path)
    copy_for_fork(src, fork)
    fork.close()
    assert w.path.read_bytes() == before
    f = TranscriptReader.load(fork.path)
    assert f.session_id == fork.session_id != src.session_id
    assert f.messages == src.messages
    assert f.session_rules == src.session_rules and f.read_file_state == src.read_file_state
    assert f.title == "T"
    for old, new in zip(src.records, f.records, strict=True):
        assert new["forkedFrom"] == {"sessionId": src.session_id, "messageUuid": old["uuid"]}
        assert new["uuid"] != old["uuid"] and new["sessionId"] == fork.session_id
        assert new["timestamp"] == old["timestamp"]
        for key in ("toolUseResult", "isMeta"):
            assert new.get(key) == old.get(key)
    assert [x["parentUuid"] for x in f.records[1:]] == [x["uuid"] for x in f.records[:-1]]


def test_sidechains_are_separate_marked_and_not_sessions(tmp_path: Path) -> None:
    w = _write(tmp_path, _user("main"))
    side = w.sidechain("a1b2")
    side.user(_user("sub task"))
    side.assistant(_asst({"type": "text", "text": "sub answer"}))
    side.close()
    w.close()
    assert side.path == w.session_dir / "subagents" / "agent-a1b2.jsonl"
    for rec in records(side.path):
        assert rec["isSidechain"] is True and rec["agentId"] == "a1b2"
        assert rec["sessionId"] == w.session_id
    assert all(rec["isSidechain"] is False for rec in records(w.path))
    assert [s.path for s in list_sessions(tmp_path)] == [w.path]
    assert TranscriptReader.load(w.path).messages == [_user("main")]
    sub = TranscriptReader.load(side.path)
    assert [m["role"] for m in sub.messages] == ["user", "assistant"] and sub.warnings == []


def test_session_title_reads_only_the_ends(tmp_path: Path) -> None:
    from agent_cli.session.resume import session_title

    w = TranscriptWriter.for_session(tmp_path)
    w.user({"role": "user", "content": "<bash-input>ls</bash-input>"}, isMeta=True)
    w.user({"role": "user", "content": [{"type": "text", "text": "  "}]})
    w.user({"role": "user", "content": [{"type": "text", "text": "refactor the parser"}]})
    assert session_title(w.path) == "refactor the parser"
    w.meta("custom-title", customTitle="Parser work")
    w.user(_user("x" * 300_000))  # the title is now far from the end...
    assert session_title(w.path) == "refactor the parser"  # ...so the first prompt stands in
    w.meta("custom-title", customTitle="Parser, day 2")
    w.close()
    assert session_title(w.path) == "Parser, day 2"
    assert TranscriptReader.load(w.path).title == "Parser, day 2"
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert session_title(tmp_path / "empty.jsonl") is None
    assert session_title(tmp_path / "missing.jsonl") is None
