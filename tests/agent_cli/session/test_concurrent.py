"""Two Nerve processes on one session: the second continues in a copy, never in the same file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text
from agent_cli.transcripts.lock import SessionInUse
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter, project_dir
from tests.agent_cli.e2e.conftest import Harness
from tests.agent_cli.session.conftest import main_transcripts, records, wait_for


def _prompts(path: Path) -> list[str]:
    out = []
    for r in records(path):
        content = r.get("message", {}).get("content") if r["type"] == "user" else None
        if isinstance(content, str):
            out.append(content)
    return out


def test_a_second_writer_is_refused_with_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = TranscriptWriter(path, session_id="s", cwd=tmp_path, lock=True)
    with pytest.raises(SessionInUse) as busy:
        TranscriptWriter(path, session_id="s", cwd=tmp_path, lock=True)
    assert busy.value.holder == os.getpid()
    assert f"pid {os.getpid()}" in str(busy.value)
    first.close()
    TranscriptWriter(path, session_id="s", cwd=tmp_path, lock=True).close()  # free again


def test_continue_while_another_nerve_writes_the_session_forks_it(
    harness: Harness, killer: list[Any]
) -> None:
    first = harness.server(
        Scenario.of(Turn([text("Thinking"), text("done thinking.")], holds={0: "hold"}))
    )
    proc = harness.popen(["-p", "first prompt", "--output-format", "json"], first)
    killer.append(proc)
    try:
        wait_for(lambda: "#1 content_block_stop[0]" in first.marks, what="the first answer")
        [original] = main_transcripts(harness)
        second = harness.run(
            ["-p", "second prompt", "--continue", "--output-format", "json"],
            Scenario.of(Turn([text("From the copy.")], match=Match(contains_text="second"))),
        )
        first.gate("hold").set()
        _out, err = proc.communicate(timeout=30)
    finally:
        first.stop()
    assert proc.returncode == 0, err
    assert second.rc == 0, second.stderr
    assert f"is in use by nerve (pid {proc.pid})" in second.stderr
    copy_id = second.json()["session_id"]
    assert copy_id != original.stem and copy_id in second.stderr
    # The copy starts from what was recorded; each process kept to its own file.
    sent = second.server.requests[0].body["messages"]
    assert sent[0]["content"][0]["text"] == "first prompt"
    assert sent[-1]["content"][-1]["text"] == "second prompt"
    assert _prompts(original) == ["first prompt"]
    reader = TranscriptReader.load(original)
    assert reader.messages[-1]["content"] == [text("Thinking"), text("done thinking.")]
    [copy] = [p for p in main_transcripts(harness) if p.stem == copy_id]
    assert _prompts(copy) == ["first prompt", "second prompt"]


async def test_resume_in_the_app_of_a_session_in_use_forks_it(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.options import RunOptions
    from agent_cli.session.agent_session import AgentSession

    for key, value in harness.env_for(None).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    path = project_dir(harness.project) / "held-session.jsonl"
    holder = TranscriptWriter(path, session_id="held-session", cwd=harness.project, lock=True)
    holder.user({"role": "user", "content": "held elsewhere"})
    session = AgentSession.create(RunOptions(), cwd=harness.project)
    try:
        messages = await session.resume(holder.session_id)
        assert messages[0]["content"] == "held elsewhere"
        assert session.session_id != holder.session_id
        assert any("is in use by" in w and session.session_id in w for w in session.warnings)
        assert session.transcript is not None
        assert _prompts(session.transcript.path) == ["held elsewhere"]
    finally:
        await session.close()
        holder.close()
