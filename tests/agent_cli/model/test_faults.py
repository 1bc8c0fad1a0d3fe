"""Every scripted-server fault kind, on the first and on a later turn: each tool runs exactly once
and the final answer arrives.

A real session (loop, executor, Bash, transcript) on the real first-party transport over
loopback HTTP. Each scenario asks for two tool calls, one per model turn, then answers; the
fault is played on turn 0 or turn 1, either before that turn handed its tool out (the client
asks again) or right after (the client keeps a partial turn, the loop answers the tool, the
conversation goes on without asking for that turn again).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_cli.loop.events import ErrorEvent, Notice, RetryEvent, ToolStarted, TurnFinished
from agent_cli.model import ModelConfig, RetryPolicy
from agent_cli.model.client import ModelClient
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import (
    Fault,
    Match,
    Scenario,
    ScriptedServer,
    Turn,
    cut,
    cut_mid_chunk,
    eof,
    hang_after_headers,
    hang_before_headers,
    malformed,
    overloaded,
    rate_limit,
    server_error,
    slow,
    stream_error,
    text,
    tool_use,
)
from agent_cli.testing.events import turn_events
from tests.agent_cli.loop.test_agent_loop import _collect, env

__all__ = ["env"]

FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.005)
IDLE = 0.4  # the stall timeout for these tests: a hang is noticed after this much silence


def _turn(k: int) -> Turn:
    match = Match(tool_result_for=f"t{k - 1}") if k else None
    return Turn(
        [text(f"step {k}"), tool_use("Bash", {"command": f"echo {k} >> ran.txt"}, id=f"t{k}")],
        match=match,
    )


def _after_tool(turn: Turn) -> int:
    """Events the server sends up to and including the tool block's content_block_stop."""
    events = turn_events(turn, "m", "m", 6, 7)
    return next(
        i + 1
        for i, (n, d) in enumerate(events)
        if n == "content_block_stop" and d.get("index") == 1
    )


BEFORE: dict[str, Callable[[Turn], Fault]] = {
    "429 with retry-after": lambda t: rate_limit(retry_after="0.01"),
    "429 without retry-after": lambda t: rate_limit(retry_after=None),
    "529": lambda t: overloaded(),
    "500": lambda t: server_error(),
    "in-stream error": lambda t: stream_error(after_events=4),
    "cut between chunks": lambda t: cut(after_events=4),
    "cut mid-chunk": lambda t: cut_mid_chunk(after_events=4),
    "clean eof without message_stop": lambda t: eof(after_events=_after_tool(t) - 1),
    "message_start then eof": lambda t: eof(after_events=2),
    "hang before headers": lambda t: hang_before_headers(),
    "hang after headers": lambda t: hang_after_headers(after_events=3),
    "slow": lambda t: slow(0.01),
    "bad block index": lambda t: malformed("bad_index", 4),
    "delta without body": lambda t: malformed("no_delta", 4),
    "second message_start": lambda t: malformed("second_start", 4),
    "invalid utf-8": lambda t: malformed("bad_utf8", 4),
    "garbage lines": lambda t: malformed("garbage", 3),
}
AFTER: dict[str, Callable[[int], Fault]] = {
    "in-stream error": lambda n: Fault(
        "stream_error", 200, "overloaded_error", "Overloaded", after_events=n, consumes_turn=True
    ),
    "cut between chunks": lambda n: cut(after_events=n, consumes_turn=True),
    "cut mid-chunk": lambda n: cut_mid_chunk(after_events=n, consumes_turn=True),
    "clean eof without message_stop": lambda n: eof(after_events=n, consumes_turn=True),
    "hang after headers": lambda n: hang_after_headers(after_events=n, consumes_turn=True),
    "bad block index": lambda n: malformed("bad_index", n, consumes_turn=True),
    "delta without body": lambda n: malformed("no_delta", n, consumes_turn=True),
    "second message_start": lambda n: malformed("second_start", n, consumes_turn=True),
    "invalid utf-8": lambda n: malformed("bad_utf8", n, consumes_turn=True),
}


async def _run(project: Path, scenario: Scenario) -> tuple[list[Any], ScriptedServer]:
    with ScriptedServer(scenario) as server:
        config = ModelConfig(api_key="k", base_url=server.base_url, idle_timeout=IDLE)
        client = ModelClient(config, policy=FAST)
        session = AgentSession.create(
            RunOptions(permission_mode="bypassPermissions"), cwd=project, model_client=client
        )
        try:
            events = await _collect(session, "run both steps")
        finally:
            await session.close()
            await client.aclose()
        server.assert_done()
    return events, server


def _assert_done_once(project: Path, events: list[Any]) -> None:
    fin = events[-1]
    assert isinstance(fin, TurnFinished) and not fin.is_error, events
    assert fin.result_text == "all done"
    assert not [e for e in events if isinstance(e, ErrorEvent)], events
    assert (project / "ran.txt").read_text() == "0\n1\n"  # each tool ran exactly once
    assert [e.tool_use_id for e in events if isinstance(e, ToolStarted)] == ["t0", "t1"]


def _scenario(at: int, fault_for: Callable[[Turn], Fault]) -> Scenario:
    turns = [_turn(0), _turn(1), Turn([text("all done")], match=Match(tool_result_for="t1"))]
    turns[at].faults = [fault_for(turns[at])]
    return Scenario(turns)


@pytest.mark.parametrize("at", [0, 1], ids=["first turn", "later turn"])
@pytest.mark.parametrize("kind", list(BEFORE))
async def test_fault_before_the_tool_was_handed_out_is_retried(
    env: Path, kind: str, at: int
) -> None:
    events, server = await _run(env, _scenario(at, BEFORE[kind]))
    _assert_done_once(env, events)
    served = [r.turn for r in server.requests]
    retried = kind not in ("slow", "garbage lines")
    assert served == ([0, 1, 2] if not retried else sorted([0, 1, 2, at]))
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert len(retries) == (1 if retried else 0), retries
    if kind == "garbage lines":
        notes = [e.text for e in events if isinstance(e, Notice) and e.level == "warning"]
        assert any("skipped unreadable lines" in t for t in notes), notes


@pytest.mark.parametrize("at", [0, 1], ids=["first turn", "later turn"])
@pytest.mark.parametrize("kind", list(AFTER))
async def test_fault_after_the_tool_was_handed_out_keeps_a_partial_turn(
    env: Path, kind: str, at: int
) -> None:
    events, server = await _run(env, _scenario(at, lambda t: AFTER[kind](_after_tool(t))))
    _assert_done_once(env, events)
    assert [r.turn for r in server.requests] == [0, 1, 2]  # that turn was never asked again
    assert not [e for e in events if isinstance(e, RetryEvent)]
    notes = [e.text for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert any("stream broke" in t for t in notes), notes


@pytest.mark.parametrize("at", [0, 1], ids=["first turn", "later turn"])
async def test_a_tool_input_that_is_not_json_gets_an_error_the_model_sees(
    env: Path, at: int
) -> None:
    turns = [_turn(0), _turn(1), Turn([text("all done")], match=Match(tool_result_for="t1"))]
    turns[at].faults = [malformed("bad_tool_json", block=1)]
    again = Turn(
        [tool_use("Bash", {"command": f"echo {at} >> ran.txt"}, id=f"t{at}b")],
        match=Match(tool_result_for=f"t{at}"),
    )
    turns.insert(at + 1, again)
    turns[at + 2].match = Match(tool_result_for=f"t{at}b")  # what follows the call sent again
    with ScriptedServer(Scenario(turns)) as server:
        config = ModelConfig(api_key="k", base_url=server.base_url, idle_timeout=IDLE)
        client = ModelClient(config, policy=FAST)
        session = AgentSession.create(
            RunOptions(permission_mode="bypassPermissions"), cwd=env, model_client=client
        )
        events = await _collect(session, "run both steps")
        await session.close()
        await client.aclose()
        server.assert_done()
        body = server.requests[at + 1].body
    assert events[-1].result_text == "all done" and not events[-1].is_error
    assert (env / "ran.txt").read_text() == "0\n1\n"  # the broken call never ran
    results = [
        b
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    broken = next(r for r in results if r["tool_use_id"] == f"t{at}")
    assert broken["is_error"] is True
    assert "not valid JSON" in str(broken["content"]), broken
    sent = [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]]
    assert {"type": "tool_use", "id": f"t{at}", "name": "Bash", "input": {}} in sent
