"""``nerve -p "/compact"`` on a continued session, ``/context``, ``/rewind`` in print mode."""

from __future__ import annotations

import json

from agent_cli.loop.compaction_prompt import SUMMARY_MARKER
from agent_cli.testing import Match, Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness


def _summary_request(body: dict) -> bool:
    return SUMMARY_MARKER in json.dumps(body["messages"])


def test_compact_a_continued_session_then_continue_from_the_summary(harness: Harness) -> None:
    first = harness.run(["-p", "what is 6x7?"], Scenario.of(Turn([text("42")])))
    assert first.rc == 0, first.stderr
    summary = Turn(
        [text("<summary>The user asked 6x7; the answer was 42.</summary>")],
        match=Match(predicate=lambda b: _summary_request(b) and "only the maths" in json.dumps(b)),
    )
    compact = harness.run(["-p", "-c", "/compact only the maths"], Scenario.of(summary))
    assert compact.rc == 0, compact.stderr
    assert "Compacted the conversation" in compact.stdout
    after = Turn(
        [text("still 42")],
        match=Match(
            predicate=lambda b: (
                "the answer was 42" in json.dumps(b["messages"][0])
                and "what is 6x7?" not in json.dumps(b["messages"])
            )
        ),
    )
    third = harness.run(["-p", "-c", "and again?"], Scenario.of(after))
    assert third.rc == 0, third.stderr
    assert third.stdout.strip() == "still 42"
    lines = [json.loads(x) for x in harness.transcripts()[0].read_text().splitlines()]
    boundary = [r for r in lines if r.get("subtype") == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0]["compactMetadata"]["trigger"] == "manual"


def test_a_failed_compaction_exits_1_and_says_why(harness: Harness) -> None:
    harness.run(["-p", "hi"], Scenario.of(Turn([text("hello")])))
    empty = Turn([text("<summary></summary>")], match=Match(predicate=_summary_request))
    run = harness.run(["-p", "-c", "/compact"], Scenario.of(empty))
    assert run.rc == 1
    assert "the model returned no summary" in run.stderr and "unchanged" in run.stderr


def test_context_prints_the_bar_with_numbers(harness: Harness) -> None:
    run = harness.run(["-p", "/context"], Scenario.of())
    assert run.rc == 0, run.stderr
    out = run.stdout
    assert out.startswith("Context · ") and "of 200k tokens" in out
    bar = out.splitlines()[1]
    assert bar.startswith("[") and bar.endswith("]") and len(bar) == 52
    for part in ("System prompt", "Built-in tools", "Messages", "Free space"):
        assert part in out
    assert "Automatic compaction at 160k tokens (80.0% of the window)" in out
    assert run.server.requests == []


def test_rewind_needs_the_app(harness: Harness) -> None:
    run = harness.run(["-p", "/rewind"], Scenario.of())
    assert run.rc == 1 and "/rewind works only in the interactive app" in run.stderr
