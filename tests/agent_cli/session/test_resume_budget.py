"""A huge transcript resumes into a request within the context budget, not into its size."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_cli.loop.compaction import split_tail
from agent_cli.loop.compaction_prompt import SUMMARY_MARKER, chunk_lines, render_transcript
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text
from agent_cli.transcripts.transcript import TranscriptWriter, project_dir


def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    project = tmp_path / "project"
    project.mkdir()
    return project


def _transcript(project: Path, turns: int, result_chars: int, text_chars: int) -> str:
    writer = TranscriptWriter.for_session(project)
    for i in range(turns):
        writer.user({"role": "user", "content": f"prompt {i}"})
        writer.assistant(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"step {i} " + "t" * text_chars},
                    {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}},
                ],
            }
        )
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "o" * result_chars}
        writer.user({"role": "user", "content": [result]})
        writer.assistant({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    writer.close()
    return writer.session_id


def _request_tokens(body: dict) -> int:
    return len(json.dumps(body["messages"])) // 4


async def test_a_transcript_of_tool_output_resumes_with_old_results_cleared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _env(tmp_path, monkeypatch)
    sid = _transcript(project, turns=300, result_chars=20_000, text_chars=200)
    size = (project_dir(project) / f"{sid}.jsonl").stat().st_size
    assert size > 6_000_000
    with ScriptedServer(Scenario.of(Turn([text("resumed")]))) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(resume=sid), cwd=project)
        events = [e async for e in session.run_turn("go on")]
        assert events[-1].result_text == "resumed"
        body = server.requests[0].body
        threshold = session.loop.compaction.policy.threshold(session.model)
        assert _request_tokens(body) < threshold
        assert len(json.dumps(body)) < size / 10
        await session.close()
        server.assert_done()


async def test_a_transcript_too_long_even_without_results_is_summarised_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _env(tmp_path, monkeypatch)
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "50000")
    sid = _transcript(project, turns=150, result_chars=100, text_chars=2_000)
    probe = AgentSession.create(RunOptions(resume=sid), cwd=project, record=False)
    head, _ = split_tail([*probe.loop.messages, {"role": "user", "content": "go on"}])
    parts = len(chunk_lines(render_transcript(head), int(50_000 * 0.4) * 4))
    await probe.close()
    assert parts > 1

    def is_part(b: dict) -> bool:
        return SUMMARY_MARKER in json.dumps(b["messages"]) and "<transcript>" in json.dumps(b)

    summaries = [
        Turn([text(f"<summary>summary after part {n}</summary>")], match=Match(predicate=is_part))
        for n in range(1, parts + 1)
    ]
    answer = Turn(
        [text("resumed")],
        match=Match(predicate=lambda b: f"summary after part {parts}" in json.dumps(b)),
    )
    with ScriptedServer(Scenario.of(*summaries, answer)) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        session = AgentSession.create(RunOptions(resume=sid), cwd=project)
        events = [e async for e in session.run_turn("go on")]
        assert events[-1].result_text == "resumed"
        for request in server.requests:
            assert _request_tokens(request.body) < 50_000
        # Each part carries the summary so far.
        assert "summary after part 1" in json.dumps(server.requests[1].body)
        final = server.requests[-1].body["messages"]
        assert final[-1]["content"][-1]["text"] == "go on"
        await session.close()
        server.assert_done()
