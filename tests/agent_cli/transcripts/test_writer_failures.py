"""The transcript writer on a full disk and with text UTF-8 cannot encode: never a crash, never
a record glued to a torn one, the failure told once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter
from tests.tinyfs import fill, tiny_tmpfs


@pytest.fixture(autouse=True)
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("NERVE_DATA_DIR", str(d))
    return d


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_lone_surrogates_are_escaped_and_read_back(tmp_path: Path) -> None:
    w = TranscriptWriter.for_session(tmp_path)
    odd = "half an emoji \ud83d, an undecodable file name b\udcffd.txt"
    call = {"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "\ud800*"}}
    w.user(_user(odd))
    w.assistant({"role": "assistant", "content": [call]})
    w.user(_user("plain ünïcode stays as it is"))
    w.close()
    raw = w.path.read_bytes()
    raw.decode("utf-8")  # every line is valid UTF-8
    assert "ünïcode".encode() in raw
    r = TranscriptReader.load(w.path)
    assert r.warnings == []
    assert [m["content"] for m in r.messages] == [odd, [call], "plain ünïcode stays as it is"]


def test_a_short_write_on_a_full_disk_is_terminated_and_told_once(tmp_path: Path) -> None:
    with tiny_tmpfs(tmp_path / "fs") as fs:
        w = TranscriptWriter(fs / "s.jsonl", session_id="s", cwd=tmp_path)
        w.user(_user("one"))
        filler = fill(fs)
        w.user(_user("two " + "x" * 6000))  # part of it fits in the file's last page
        assert w.failure is not None and "No space left on device" in w.failure
        w.user(_user("lost too"))
        torn = w.path.read_bytes()
        assert not torn.endswith(b"\n") and len(torn.splitlines()) == 2  # one torn line
        assert w.take_failure() == w.failure
        assert w.take_failure() is None  # told once
        filler.unlink()
        w.user(_user("three"))
        w.close()
        lines = w.path.read_bytes().split(b"\n")
        assert json.loads(lines[2])["message"]["content"] == "three"  # on a line of its own
        r = TranscriptReader.load(w.path)
        assert [m["content"] for m in r.messages] == ["one", "three"]
        assert any("unreadable line" in x for x in r.warnings)


def test_an_unwritable_data_dir_is_a_failure_not_an_exception(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    w = TranscriptWriter(blocker / "projects" / "s.jsonl", session_id="s", cwd=tmp_path)
    assert w.failure is not None and "Not a directory" in w.failure
    w.user(_user("nowhere to go"))  # a no-op, not a crash
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.user(_user("after close is a bug"))
