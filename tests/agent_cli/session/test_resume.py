"""Resume through the real ``nerve -p``: --continue, --resume ID, --fork-session, and the state a
resume brings back (messages, tool inputs as sent, persisted results, read-file state, mode)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import pytest

from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.session.resume import find_session
from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter
from tests.agent_cli.e2e.conftest import Harness
from tests.agent_cli.session.conftest import main_transcripts, records

ENVELOPE = ("uuid", "parentUuid", "sessionId", "timestamp", "cwd", "version", "gitBranch", "type")


def _results(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"]: b for b in message["content"] if b.get("type") == "tool_result"}


def _p(harness: Harness, prompt: str, turns: list[Turn], *flags: str) -> Any:
    run = harness.run(["-p", prompt, "--output-format", "json", *flags], Scenario.of(*turns))
    assert run.rc == 0, run.stderr
    return run


def test_continue_restores_everything_the_first_run_recorded(harness: Harness) -> None:
    subprocess.run(["git", "init", "-q", "-b", "feat"], cwd=harness.project, check=True)
    notes = harness.project / "notes.txt"
    notes.write_text("alpha\nbeta\n")
    (harness.project / "big.log").write_text(
        "".join(f"match {i} {'y' * 150}\n" for i in range(300))
    )
    big = "python3 -c \"print('x' * 120000)\""
    grep = {"pattern": "match", "path": "big.log", "output_mode": "content"}
    first = _p(
        harness,
        "look around",
        [
            Turn(
                [
                    text("Looking."),
                    tool_use("Glob", {"pattern": "*.txt", "path": "."}, id="t_glob"),
                    tool_use("Read", {"file_path": str(notes)}, id="t_read"),
                    tool_use("Bash", {"command": big}, id="t_big"),
                    tool_use("Grep", grep, id="t_grep"),
                ]
            ),
            Turn([text("Seen it.")], match=Match(tool_result_for="t_grep")),
        ],
        "--allowedTools",
        "Bash(python3 *)",
    )
    sid = first.json()["session_id"]
    [path] = main_transcripts(harness)
    assert path.stem == sid
    recs = records(path)
    for rec in (r for r in recs if r["type"] in ("user", "assistant")):
        for key in ENVELOPE:
            assert key in rec, (key, rec["type"])
        assert rec["sessionId"] == sid and rec["cwd"] == str(harness.project)
        assert rec["gitBranch"] == "feat" and rec["isSidechain"] is False
        assert rec["message"]["role"] == rec["type"]
    chain = [r for r in recs if "uuid" in r]
    assert [r["parentUuid"] for r in chain] == [None] + [r["uuid"] for r in chain[:-1]]
    # Tool inputs exactly as the model sent them (the pipeline's backfilled "." -> abs path
    # is for hooks and permissions only). Each call had its own streaming record when it was
    # handed out; the complete message follows them.
    calls = [r for r in recs if r["type"] == "assistant" and r.get("streaming")]
    assert [b["id"] for r in calls for b in r["message"]["content"] if b["type"] == "tool_use"] == [
        "t_glob",
        "t_read",
        "t_big",
        "t_grep",
    ]
    [asst] = [
        r
        for r in recs
        if r["type"] == "assistant" and not r.get("streaming") and "t_glob" in str(r)
    ]
    assert {r["streamId"] for r in calls} == {asst["streamId"]}
    inputs = {b["id"]: b["input"] for b in asst["message"]["content"] if b["type"] == "tool_use"}
    assert inputs["t_glob"] == {"pattern": "*.txt", "path": "."} and inputs["t_grep"] == grep
    # Each result is its own record with the tool's structured output (fields, not a repr).
    outputs = {
        r["toolUseResult"]["tool_use_id"]: r["toolUseResult"] for r in recs if "toolUseResult" in r
    }
    assert set(outputs) == {"t_glob", "t_read", "t_big", "t_grep"}
    assert outputs["t_big"]["tool_name"] == "Bash"
    assert outputs["t_big"]["output"]["total_bytes"] == 120_001
    # Big results live beside the transcript: Grep's past its limit in tool-results/, Bash's
    # full output in its own spool; the conversation holds a preview and the path.
    session_dir = path.with_suffix("")
    [saved] = list((session_dir / "tool-results").iterdir())
    assert saved.name == "t_grep.txt" and "match 249" in saved.read_text()
    [spool] = list((session_dir / "bash-output").iterdir())
    assert spool.stat().st_size == 120_001
    results = _results(first.server.requests[1].body["messages"][-1])
    assert "<persisted-output>" in results["t_grep"]["content"]
    assert str(saved) in results["t_grep"]["content"]
    assert str(spool) in results["t_big"]["content"]

    # Resume: same session, every message back, the edit works without reading again.
    second = _p(
        harness,
        "now change beta",
        [
            Turn(
                [
                    tool_use(
                        "Edit",
                        {"file_path": str(notes), "old_string": "beta", "new_string": "gamma"},
                        id="t_edit",
                    )
                ],
                match=Match(contains_text="now change beta"),
            ),
            Turn([text("Changed.")], match=Match(tool_result_for="t_edit")),
        ],
        "--continue",
        "--permission-mode",
        "acceptEdits",
    )
    assert second.json()["session_id"] == sid
    body = second.server.requests[0].body["messages"]
    before = first.server.requests[1].body["messages"]
    assert body[: len(before)] == before  # byte-for-byte the same conversation
    assert (
        body[-1]
        == {
            "role": "assistant",
            "content": [{"type": "text", "text": "Seen it."}],
        }
        or body[-1]["content"][-1]["text"] == "now change beta"
    )
    edit = _results(second.server.requests[1].body["messages"][-1])["t_edit"]
    assert edit.get("is_error") is not True, edit
    assert notes.read_text() == "alpha\ngamma\n"
    assert main_transcripts(harness) == [path]


def test_a_file_changed_since_the_read_must_be_read_again(harness: Harness) -> None:
    notes = harness.project / "notes.txt"
    notes.write_text("alpha\n")
    _p(
        harness,
        "read it",
        [
            Turn([tool_use("Read", {"file_path": str(notes)}, id="t_read")]),
            Turn([text("Read.")], match=Match(tool_result_for="t_read")),
        ],
    )
    notes.write_text("alpha, edited by hand\n")
    st = notes.stat()
    os.utime(notes, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    run = _p(
        harness,
        "edit it",
        [
            Turn(
                [
                    tool_use(
                        "Edit",
                        {"file_path": str(notes), "old_string": "alpha", "new_string": "omega"},
                        id="t_edit",
                    )
                ]
            ),
            Turn([text("Hm.")], match=Match(tool_result_for="t_edit")),
        ],
        "--continue",
        "--permission-mode",
        "acceptEdits",
    )
    edit = _results(run.server.requests[1].body["messages"][-1])["t_edit"]
    assert edit["is_error"] is True and "modified since read" in str(edit["content"])
    assert notes.read_text() == "alpha, edited by hand\n"


def test_resume_by_id_prefix_and_errors(harness: Harness) -> None:
    a = _p(harness, "prompt A", [Turn([text("A.")])]).json()["session_id"]
    newer = TranscriptWriter.for_session(harness.project.resolve())  # the latest session
    newer.user({"role": "user", "content": "prompt B"})
    newer.close()
    [older] = [x for x in main_transcripts(harness) if x.stem == a]
    os.utime(older, (1, 1))  # file times can tie within one clock tick
    assert find_session(harness.project.resolve(), None) == newer.path
    run = _p(
        harness,
        "more",
        [Turn([text("A again.")], match=Match(contains_text="more"))],
        "--resume",
        a[:8],
    )
    assert run.json()["session_id"] == a
    texts = str(run.server.requests[0].body["messages"])
    assert "prompt A" in texts and "prompt B" not in texts
    bad = harness.run(["-p", "x", "--resume", "nope"], None)
    assert bad.rc == 1 and "No session 'nope'" in bad.stderr
    picker = harness.run(["-p", "x", "--resume"], None)
    assert picker.rc == 1 and "needs a session id" in picker.stderr


def test_fork_session_is_a_new_session_and_leaves_the_original(harness: Harness) -> None:
    first = _p(harness, "original prompt", [Turn([text("Original answer.")])])
    sid = first.json()["session_id"]
    [orig] = main_transcripts(harness)
    before = orig.read_bytes()
    fork = _p(
        harness,
        "forked prompt",
        [Turn([text("Forked answer.")], match=Match(contains_text="forked prompt"))],
        "--continue",
        "--fork-session",
    )
    new_id = fork.json()["session_id"]
    assert new_id != sid
    assert orig.read_bytes() == before
    messages = fork.server.requests[0].body["messages"]
    assert messages[0]["content"][0]["text"] == "original prompt"
    assert messages[1]["content"][0]["text"] == "Original answer."
    forked = orig.with_name(f"{new_id}.jsonl")
    recs = [r for r in records(forked) if r["type"] in ("user", "assistant")]
    old = [r for r in records(orig) if r["type"] in ("user", "assistant")]
    assert [r["forkedFrom"] for r in recs[:2]] == [
        {"sessionId": sid, "messageUuid": r["uuid"]} for r in old
    ]
    assert all(r["sessionId"] == new_id for r in recs)
    assert "forkedFrom" not in recs[-1]  # the new turn is the fork's own


@pytest.fixture
def in_process(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> Harness:
    """Run ``AgentSession`` in this process with the harness's environment and project."""
    for key, value in harness.env_for(None).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never called
    monkeypatch.chdir(harness.project)
    return harness


def _create(h: Harness, **kw: Any) -> AgentSession:
    return AgentSession.create(RunOptions(**kw), cwd=h.project)


@pytest.mark.parametrize(
    ("stored", "restored"),
    [
        ("acceptEdits", "acceptEdits"),
        ("dontAsk", "dontAsk"),
        ("plan", "default"),
        ("bypassPermissions", "default"),
    ],
)
async def test_mode_restored_except_plan_and_bypass(
    in_process: Harness, stored: str, restored: str
) -> None:
    s = _create(in_process, permission_mode=stored)
    assert s.mode == stored and s.transcript is not None
    s.transcript.user({"role": "user", "content": "hello"})
    await s.close()
    again = _create(in_process, continue_session=True)
    assert again.session_id == s.session_id and again.mode == restored
    await again.close()
    assert TranscriptReader.load(s.transcript.path).permission_mode == restored


async def test_unknown_stored_mode_resumes_in_default_mode(in_process: Harness) -> None:
    s = _create(in_process, permission_mode="acceptEdits")
    assert s.transcript is not None
    s.transcript.user({"role": "user", "content": "hello"})
    # A mode written by another version (or a damaged line): resumed, not a crash.
    s.transcript.meta("permission-mode", mode="notAMode")
    await s.close()
    again = _create(in_process, continue_session=True)
    assert again.session_id == s.session_id and again.mode == "default"
    again.set_mode("acceptEdits")
    assert again.transcript is not None
    again.transcript.meta("permission-mode", mode="notAMode")
    await again.resume(s.session_id)
    assert again.mode == "default"
    await again.close()


async def test_session_rules_restored_and_removed_ones_stay_removed(in_process: Harness) -> None:
    s = _create(in_process)
    s.add_rule("allow", "Bash(touch *)", "session")
    s.add_rule("allow", "Bash(rm *)", "session")
    assert s.remove_rule("allow", "Bash(rm *)", "session")
    s.set_mode("acceptEdits")
    s.set_mode("default")
    assert s.transcript is not None
    s.transcript.user({"role": "user", "content": "hello"})
    await s.close()
    modes = [r["mode"] for r in records(s.transcript.path) if r["type"] == "permission-mode"]
    assert modes == ["default", "acceptEdits", "default"]
    # The real process: the restored rule lets touch run in default mode; rm still asks (denied).
    run = _p(
        in_process,
        "make files",
        [
            Turn(
                [
                    tool_use("Bash", {"command": "touch made.txt"}, id="t_touch"),
                    tool_use("Bash", {"command": "rm made.txt"}, id="t_rm"),
                ]
            ),
            Turn([text("ok")], match=Match(tool_result_for="t_rm")),
        ],
        "--continue",
    )
    results = _results(run.server.requests[1].body["messages"][-1])
    assert results["t_touch"].get("is_error") is not True
    assert results["t_rm"]["is_error"] is True and "not granted" in str(results["t_rm"]["content"])
    assert (in_process.project / "made.txt").exists()


async def test_background_tasks_are_kept_and_listed_as_not_running(in_process: Harness) -> None:
    run = _p(
        in_process,
        "start a server",
        [
            Turn([tool_use("Bash", {"command": "sleep 30", "run_in_background": True}, id="t_bg")]),
            Turn([text("Started.")], match=Match(tool_result_for="t_bg")),
        ],
        "--permission-mode",
        "bypassPermissions",
    )
    [path] = main_transcripts(in_process)
    [task] = TranscriptReader.load(path).background_tasks
    assert task["command"] == "sleep 30" and task["status"] != "running"  # stopped at exit
    s = _create(in_process, continue_session=True)
    assert s.session_id == run.json()["session_id"]
    [view] = s.background_tasks()
    assert view.task_id == task["task_id"] and view.command == "sleep 30"
    assert view.status == task["status"]
    await s.close()
    # closing the resumed session keeps the earlier task in the file
    assert [t["task_id"] for t in TranscriptReader.load(path).background_tasks] == [view.task_id]
