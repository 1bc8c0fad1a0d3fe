"""``--no-session-persistence`` (the Agent SDKs' ``persistSession: false``): the session runs
and writes no transcript, so it cannot be resumed."""

from __future__ import annotations

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]


def test_no_transcript_is_written(harness: Harness) -> None:
    run = harness.run(["-p", "hi", "--no-session-persistence"], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "ok"
    assert harness.transcripts() == []
    kept = harness.run(["-p", "hi"], Scenario.of(Turn([text("ok")])))
    assert kept.rc == 0, kept.stderr
    assert len(harness.transcripts()) == 1  # without the flag one is written
