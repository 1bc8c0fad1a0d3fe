"""Compaction through a real session: real SDK, scripted server on loopback, real hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.loop.compaction_prompt import SUMMARY_MARKER
from agent_cli.loop.events import CompactProgress, ErrorEvent, Notice, TurnFinished
from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, http_error, text
from tests.agent_cli.loop.conftest import (
    collect,
    hook_logger,
    open_session,
    settings,
    transcript_records,
)

BIG = 170_000  # input tokens the API reports: over 80% of a 200k window
SUMMARY = "<analysis>thinking</analysis><summary>User asked for a parser; it is done.</summary>"


def _is_summary_request(body: Any) -> bool:
    return SUMMARY_MARKER in json.dumps(body["messages"])


def summary_turn(answer: str = SUMMARY, **kw: Any) -> Turn:
    return Turn([text(answer)], match=Match(predicate=_is_summary_request), **kw)


def _first_user_text(body: Any) -> str:
    first = body["messages"][0]["content"]
    return first if isinstance(first, str) else json.dumps(first)


def _stages(events: list[Any]) -> list[str]:
    return [e.stage for e in events if isinstance(e, CompactProgress)]


async def test_auto_compaction_summarises_keeps_the_new_prompt_and_records_a_boundary(
    project: Path,
) -> None:
    pre = hook_logger(project, "PreCompact")
    post = hook_logger(project, "PostCompact")
    settings(
        project,
        {
            "hooks": {
                "PreCompact": [
                    {"hooks": [{"type": "command", "command": str(pre.with_suffix(".sh"))}]}
                ],
                "PostCompact": [
                    {"hooks": [{"type": "command", "command": str(post.with_suffix(".sh"))}]}
                ],
            }
        },
    )
    (project / "notes.txt").write_text("alpha\nbeta\n")
    scenario = Scenario.of(
        Turn([text("first answer")], input_tokens=BIG),
        summary_turn(),
        Turn(
            [text("second answer")],
            match=Match(
                predicate=lambda b: (
                    "User asked for a parser" in _first_user_text(b)
                    and "second question" in json.dumps(b["messages"][-1])
                )
            ),
        ),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("first question"))
        events = await collect(session.run_turn("second question"))
        assert events[-1].result_text == "second answer"
        assert _stages(events) == ["started", "done"]
        done = [e for e in events if isinstance(e, CompactProgress)][-1]
        assert done.trigger == "auto" and "Compacted the conversation" in done.text
        # The summary request carries the whole old conversation, the new prompt is not in it.
        summary_body = json.dumps(server.requests[1].body["messages"])
        assert "first question" in summary_body and "second question" not in summary_body
        # After: the summary, then the new prompt word for word; the old turn is gone.
        after = server.requests[2].body["messages"]
        assert "first answer" not in json.dumps(after)
        assert after[-1]["content"][-1]["text"] == "second question"
        records = transcript_records(session)
        kinds = [(r["type"], r.get("subtype")) for r in records if r["type"] in ("system",)]
        assert kinds == [("system", "compact_boundary")]
        i = next(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
        boundary, summary = records[i], records[i + 1]
        assert boundary["parentUuid"] is None and boundary["logicalParentUuid"]
        meta = boundary["compactMetadata"]
        # The API's count after the first answer (in + out), plus an estimate of the prompt.
        assert meta["trigger"] == "auto" and BIG + 5 < meta["preTokens"] < BIG + 50
        assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
        assert "User asked for a parser" in summary["message"]["content"]
        assert "<analysis>" not in summary["message"]["content"]
        await session.close()
        server.assert_done()
    pre_payload = json.loads(pre.read_text().splitlines()[0])
    assert pre_payload["hook_event_name"] == "PreCompact"
    assert pre_payload["trigger"] == "auto" and pre_payload["custom_instructions"] == ""
    post_payload = json.loads(post.read_text().splitlines()[0])
    assert post_payload["trigger"] == "auto"
    assert post_payload["compact_summary"] == "User asked for a parser; it is done."


async def test_clearing_old_tool_results_is_tried_first_and_can_be_enough(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "12000")  # threshold 6,000 tokens
    reads = []
    for i in range(12):
        (project / f"f{i}.txt").write_text(f"file {i}\n" + "r" * 2000 + "\n")
        path = str(project / f"f{i}.txt")
        reads.append({"type": "tool_use", "name": "Read", "input": {"file_path": path}})
    scenario = Scenario.of(Turn(reads), Turn([text("read them all")]))
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        events = await collect(session.run_turn("read the files"))
        assert events[-1].result_text == "read them all"
        notices = [e.text for e in events if isinstance(e, Notice)]
        assert any(n.startswith("Cleared 7 old tool results") for n in notices), notices
        assert _stages(events) == []  # no summary turn was needed
        results = [
            b["content"]
            for m in server.requests[1].body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        stub = "[Old tool result content cleared: this Read output was removed to free context]"
        assert results[:7] == [stub] * 7
        assert all("r" * 2000 in r for r in results[7:])
        # The transcript keeps every result whole.
        raw = session.transcript.path.read_text() if session.transcript else ""
        assert raw.count("r" * 2000) >= 12
        await session.close()
        server.assert_done()


@pytest.mark.parametrize(
    ("summary", "why"),
    [
        (Turn([text("<summary>half a sum")], stop_reason="max_tokens"), "cut off"),
        (Turn([text("<summary> </summary>")]), "no summary"),
        (Turn([text("x")], faults=[http_error(400, "invalid_request_error", "bad")]), "API error"),
    ],
    ids=["cut-off", "empty", "api-error"],
)
async def test_a_failed_summary_leaves_the_conversation_as_it_was(
    project: Path, summary: Turn, why: str
) -> None:
    scenario = Scenario.of(Turn([text("first answer")]), summary)
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("first question"))
        before = [dict(m) for m in session.loop.messages]
        size = session.transcript.path.stat().st_size if session.transcript else 0
        events = await collect(session.compact("focus on tests"))
        failed = [e for e in events if isinstance(e, CompactProgress)][-1]
        assert failed.stage == "failed" and why in failed.text
        assert "unchanged" in failed.text
        assert session.loop.messages == before
        records = transcript_records(session)
        assert not any(r.get("subtype") == "compact_boundary" for r in records)
        assert session.transcript is not None and session.transcript.path.stat().st_size == size
        await session.close()


async def test_manual_compact_with_instructions_then_resume_starts_from_the_boundary(
    project: Path,
) -> None:
    scenario = Scenario.of(
        Turn([text("first answer")]),
        Turn(
            [text(SUMMARY)],
            match=Match(
                predicate=lambda b: (
                    _is_summary_request(b) and "Keep the API names" in json.dumps(b["messages"])
                )
            ),
        ),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("first question"))
        events = await collect(session.compact("Keep the API names"))
        assert _stages(events) == ["started", "done"]
        assert len(session.loop.messages) == 1  # the summary; nothing was read to re-attach
        sid = session.session_id
        await session.close()
        server.assert_done()
    resumed_scenario = Scenario.of(
        Turn(
            [text("resumed answer")],
            match=Match(
                predicate=lambda b: (
                    "User asked for a parser" in _first_user_text(b)
                    and "first answer" not in json.dumps(b["messages"])
                )
            ),
        ),
        Turn(
            [text("forked answer")],
            match=Match(
                predicate=lambda b: (
                    "User asked for a parser" in _first_user_text(b)
                    and "first answer" not in json.dumps(b["messages"])
                    and "resumed answer" in json.dumps(b["messages"])
                )
            ),
        ),
    )
    with ScriptedServer(resumed_scenario) as server:
        resumed = open_session(server, project, resume=sid)
        events = await collect(resumed.run_turn("and now?"))
        assert events[-1].result_text == "resumed answer"
        await resumed.close()
        forked = open_session(server, project, resume=sid, fork_session=True)
        assert forked.session_id != sid
        # The fork copies from the boundary on: the summary and the resumed turn.
        assert [m["role"] for m in forked.loop.messages] == ["user", "assistant"]
        events = await collect(forked.run_turn("fork"))
        assert events[-1].result_text == "forked answer"
        await forked.close()
        server.assert_done()


async def test_prompt_too_long_compacts_and_retries_once(project: Path) -> None:
    too_long = http_error(
        400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"
    )
    scenario = Scenario.of(
        Turn([text("first answer")]),
        # The fault answers the turn's request; the summary request comes next (the server
        # checks a match before its faults, so this turn has none).
        Turn([text(SUMMARY)], faults=[too_long]),
        Turn([text("after retry")], match=Match(contains_text="second question")),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("first question"))
        events = await collect(session.run_turn("second question"))
        assert events[-1].result_text == "after retry" and not events[-1].is_error
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        assert any(isinstance(e, Notice) and "too long" in e.text for e in events)
        assert _stages(events) == ["started", "done"]
        # Asked as parts (the API said the whole is too long): the old turn as a transcript.
        assert "<transcript>" in json.dumps(server.requests[2].body["messages"])
        await session.close()
        server.assert_done()


async def test_prompt_too_long_twice_is_an_error_not_a_loop(project: Path) -> None:
    too_long = http_error(400, "invalid_request_error", "prompt is too long: 300000 tokens")
    scenario = Scenario.of(
        Turn([text("first answer")]),
        Turn([text(SUMMARY)], faults=[too_long]),
        Turn([text("never")], faults=[too_long]),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("first question"))
        events = await collect(session.run_turn("second question"))
        finished = events[-1]
        assert isinstance(finished, TurnFinished) and finished.is_error
        assert any(isinstance(e, ErrorEvent) and "too long" in e.message for e in events)
        await session.close()


async def test_esc_cancels_a_compaction_and_nothing_is_lost(project: Path) -> None:
    scenario = Scenario.of(
        Turn([text("first answer")]),
        Turn([text(SUMMARY)], holds={0: "summary"}, match=Match(predicate=_is_summary_request)),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("first question"))
        before = [dict(m) for m in session.loop.messages]
        events = []
        async for event in session.compact():
            events.append(event)
            if isinstance(event, CompactProgress) and event.stage == "started":
                session.abort()
        server.gate("summary").set()
        assert _stages(events)[-1] == "cancelled"
        assert session.loop.messages == before
        assert not any(r.get("subtype") == "compact_boundary" for r in transcript_records(session))
        await session.close()


async def test_auto_compact_off_warns_once_and_sends_as_is(project: Path) -> None:
    settings(project, {"autoCompact": False})
    scenario = Scenario.of(
        Turn([text("first answer")], input_tokens=BIG),
        Turn([text("second answer")], input_tokens=BIG),
        Turn([text("third answer")]),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("one"))
        second = await collect(session.run_turn("two"))
        third = await collect(session.run_turn("three"))
        warned = [e for e in second + third if isinstance(e, Notice) and "autoCompact" in e.text]
        assert len(warned) == 1 and "/compact" in warned[0].text
        assert _stages(second + third) == []
        await session.close()
        server.assert_done()


async def test_a_bad_autocompact_setting_is_reported(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings(project, {"autoCompact": "sometimes"})
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "250")
    session = AgentSession.create(RunOptions(), cwd=project, model_client=_NoModel())
    joined = "\n".join(session.warnings)
    assert "autoCompact: expected true or false" in joined
    assert "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE='250'" in joined
    assert session.loop.compaction.policy.auto and session.loop.compaction.policy.pct == 80
    await session.close()


async def test_the_settings_env_sets_the_threshold_over_the_shell(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "90")
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "1000000")
    settings(
        project,
        {
            "env": {
                "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50",
                "CLAUDE_CODE_AUTO_COMPACT_WINDOW": 64000,
            }
        },
    )
    session = AgentSession.create(RunOptions(), cwd=project, model_client=_NoModel())
    assert session.warnings == []
    assert session.loop.compaction.policy.threshold(session.model) == 32_000
    assert session.context_usage().window == 64_000
    await session.close()


class _NoModel:
    async def stream_turn(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no model call expected")


async def test_files_read_and_the_todo_list_come_back_after_compaction_and_resume(
    project: Path,
) -> None:
    notes = project / "notes.txt"
    notes.write_text("alpha\nbeta\n")
    todos = {
        "todos": [
            {"content": "write parser", "status": "completed", "activeForm": "Writing parser"},
            {"content": "test parser", "status": "in_progress", "activeForm": "Testing parser"},
        ]
    }
    from agent_cli.testing import tool_use

    scenario = Scenario.of(
        Turn([tool_use("Read", {"file_path": str(notes)}), tool_use("TodoWrite", todos)]),
        Turn([text("read and planned")]),
        summary_turn(),
        Turn(
            [text("after")],
            match=Match(
                predicate=lambda b: (
                    "Files you read before the conversation was compacted"
                    in json.dumps(b["messages"])
                    and "1\\talpha" in json.dumps(b["messages"])
                    and "[in_progress] test parser" in json.dumps(b["messages"])
                )
            ),
        ),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project, permission_mode="bypassPermissions")
        await collect(session.run_turn("read notes and plan"))
        assert _stages(await collect(session.compact())) == ["started", "done"]
        # Re-attached files count as read: an Edit needs no new Read.
        assert [r.path.name for r in session.ctx.state.read_files.records()] == ["notes.txt"]
        assert (await collect(session.run_turn("go on")))[-1].result_text == "after"
        sid = session.session_id
        await session.close()
        server.assert_done()
    with ScriptedServer(Scenario.of()) as server:
        resumed = open_session(server, project, resume=sid)
        assert [t["content"] for t in resumed.todos()] == ["write parser", "test parser"]
        await resumed.close()


async def test_esc_while_compacting_for_a_too_long_prompt_interrupts_the_turn(
    project: Path,
) -> None:
    too_long = http_error(400, "invalid_request_error", "prompt is too long: 212345 tokens")
    scenario = Scenario.of(
        Turn([text("first answer")]),
        Turn([text(SUMMARY)], faults=[too_long], holds={0: "summary"}),
    )
    with ScriptedServer(scenario) as server:
        session = open_session(server, project)
        await collect(session.run_turn("first question"))
        events = []
        async for event in session.run_turn("second question"):
            events.append(event)
            if isinstance(event, CompactProgress) and event.stage == "started":
                session.abort()
        server.gate("summary").set()
        assert _stages(events)[-1] == "cancelled"
        finished = events[-1]
        assert finished.stop_reason == "aborted" and not finished.is_error
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        await session.close()
