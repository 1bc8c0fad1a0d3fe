"""The loop against a model that misbehaves: odd tool_use blocks, odd stop reasons, late 400s.

Real session, real SDK, the scripted server on loopback (as in ``test_loop.py``). Where a case
needs a block the scenario format refuses (a tool_use whose input is not an object, a tool_use
cut by ``max_tokens``), the test edits the scenario after it was built or the wire events the
server sends; the client and the loop see exactly what a real server could send.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

import agent_cli.testing.scripted_server as scripted_server
from agent_cli.loop.events import Notice, ToolStarted, TurnFinished
from agent_cli.testing import (
    Match,
    Scenario,
    ScriptedServer,
    Turn,
    http_error,
    text,
    thinking,
    tool_use,
)
from agent_cli.testing.events import Event
from tests.agent_cli.e2e.conftest import Harness, harness
from tests.agent_cli.loop.test_agent_loop import _collect, _session, env

# a command that runs until interrupted (a standalone `sleep` is refused before it runs)
SLOW = "python3 -c 'import time; time.sleep(888)'"
__all__ = ["env", "harness"]


def _tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in body["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    out[b["tool_use_id"]] = b
    return out


def _content_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return " ".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


@pytest.mark.parametrize("bad_input", [[1, 2], 42, "just a string", None])
async def test_tool_input_that_is_not_an_object_gets_an_error_result(
    env: Path, bad_input: Any
) -> None:
    scenario = Scenario.of(
        Turn([text("reading"), tool_use("Read", {}, id="t_bad")]),
        Turn([text("sorry")], match=Match(tool_result_for="t_bad")),
    )
    scenario.turns[0].blocks[1]["input"] = bad_input  # past the scenario's own check
    with ScriptedServer(scenario) as server:
        session = await _session(server, env, permission_mode="bypassPermissions")
        events = await _collect(session, "go")
        fin = events[-1]
        assert isinstance(fin, TurnFinished) and not fin.is_error, events
        assert fin.result_text == "sorry"
        body = server.requests[-1].body
        result = _tool_results(body)["t_bad"]
        assert result["is_error"] is True and "Read" in _content_text(result)
        # The API takes back only an object: the recorded call carries {} instead.
        sent = [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]]
        assert [b["input"] for b in sent if b.get("type") == "tool_use"] == [{}]
        await session.close()
        server.assert_done()


def _truncate_last_tool_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``max_tokens`` turn's last tool_use stops mid-input, as the real API sends it."""
    real = scripted_server.turn_events

    def events(turn: Turn, *args: Any) -> list[Event]:
        out = real(turn, *args)
        tools = [i for i, b in enumerate(turn.blocks) if b["type"] == "tool_use"]
        if turn.resolved_stop_reason() != "max_tokens" or not tools:
            return out
        raw = json.dumps(turn.blocks[tools[-1]]["input"])
        cut_json = raw[: raw.index("LONG")]
        kept: list[Event] = []
        sent = False
        for name, data in out:
            delta = data.get("delta", {})
            if data.get("index") == tools[-1] and delta.get("type") == "input_json_delta":
                if not sent:  # the whole cut input in one delta, the rest never comes
                    kept.append((name, {**data, "delta": {**delta, "partial_json": cut_json}}))
                    sent = True
                continue
            kept.append((name, data))
        return kept

    monkeypatch.setattr(scripted_server, "turn_events", events)


async def test_tool_call_cut_by_max_tokens_is_never_run(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _truncate_last_tool_input(monkeypatch)
    # Cut inside "description", the SDK's partial parse still yields a runnable command.
    cut_call = {"command": "touch cut.txt", "description": "LONG description never finished"}
    scenario = Scenario.of(
        Turn(
            [
                text("two things"),
                tool_use("Bash", {"command": "touch whole.txt"}, id="t_whole"),
                tool_use("Bash", cut_call, id="t_cut"),
            ],
            stop_reason="max_tokens",
        ),
        Turn([text("ok")], match=Match(tool_result_for="t_whole")),
        Turn([text("only words")], stop_reason="max_tokens"),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env, permission_mode="bypassPermissions")
        events = await _collect(session, "go")
        assert (env / "whole.txt").exists() and not (env / "cut.txt").exists()
        assert [e.tool_use_id for e in events if isinstance(e, ToolStarted)] == ["t_whole"]
        assert events[-1].result_text == "ok" and not events[-1].is_error
        body = server.requests[1].body
        sent = [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]]
        assert [b["id"] for b in sent if b.get("type") == "tool_use"] == ["t_whole"]
        assert set(_tool_results(body)) == {"t_whole"}
        # A plain answer cut by max_tokens ends the turn, saying so.
        words = await _collect(session, "more")
        assert words[-1].stop_reason == "max_tokens" and words[-1].result_text == "only words"
        assert any(isinstance(e, Notice) and "max_tokens" in e.text for e in words)
        await session.close()
        server.assert_done()


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in stdout.splitlines() if x.strip()]


def test_400_after_tools_ran_ends_clearly_and_continue_goes_on(harness: Harness) -> None:
    marker = harness.project / "r.txt"
    first = Scenario.of(
        Turn([tool_use("Bash", {"command": "echo ran >> r.txt"}, id="t_a")]),
        Turn(
            [text("never")],
            # Not "prompt is too long": that one compacts and asks again (test_compaction).
            faults=[http_error(400, "invalid_request_error", "messages: content is invalid")],
        ),
    )
    args = ["--output-format", "json", "--permission-mode", "acceptEdits"]
    run = harness.run(["-p", "go", *args], first, check_done=False)
    out = _lines(run.stdout)
    assert len(out) == 1 and out[0]["type"] == "result", run.stdout
    assert run.rc == 1 and out[0]["is_error"] is True
    # Claude Code's shape for an API error: subtype success, is_error, the status, the message
    assert out[0]["subtype"] == "success" and out[0]["api_error_status"] == 400
    assert "content is invalid" in out[0]["result"]
    assert "Traceback" not in run.stderr and marker.read_text() == "ran\n"
    second = Scenario.of(Turn([text("picked up")], match=Match(contains_text="go on")))
    again = harness.run(["-p", "go on", "--continue", *args], second)
    assert again.rc == 0, again.stderr
    assert again.json()["result"] == "picked up"
    body = again.server.requests[0].body
    assert "t_a" in _tool_results(body) and marker.read_text() == "ran\n"  # not run again


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_api_error_still_prints_one_result_object(harness: Harness, fmt: str) -> None:
    scenario = Scenario.of(
        Turn([text("never")], faults=[http_error(400, "invalid_request_error", "bad request")])
    )
    run = harness.run(["-p", "hi", "--output-format", fmt], scenario, check_done=False)
    lines = _lines(run.stdout)
    results = [x for x in lines if x["type"] == "result"]
    assert run.rc == 1 and len(results) == 1 and lines[-1] is results[0]
    assert results[0]["is_error"] is True and results[0]["subtype"] == "success"
    assert results[0]["api_error_status"] == 400 and results[0]["terminal_reason"] == "api_error"
    assert results[0]["api_error_type"] == "invalid_request_error"
    assert "bad request" in results[0]["result"]
    if fmt == "stream-json":  # and, before it, Claude Code's synthetic message saying so
        (said,) = [x for x in lines if x["type"] == "assistant"]
        assert said["is_api_error_message"] is True and said["error"] == "invalid_request"
        assert said["message"]["model"] == "<synthetic>"
        assert "bad request" in said["message"]["content"][0]["text"]


def test_stream_json_ends_with_a_result_on_max_turns(harness: Harness) -> None:
    scenario = Scenario.of(Turn([tool_use("Glob", {"pattern": "*"}, id="g1")]))
    run = harness.run(
        ["-p", "loop", "--max-turns", "1", "--output-format", "stream-json"], scenario
    )
    last = _lines(run.stdout)[-1]
    assert run.rc == 1
    assert last["type"] == "result" and last["subtype"] == "error_max_turns"


def test_stream_json_ends_with_a_result_when_interrupted(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": SLOW}, id="t_slow")]),
    )
    server = harness.server(scenario)
    try:
        proc = harness.popen(
            [
                "-p",
                "wait",
                "--output-format",
                "stream-json",
                "--permission-mode",
                "bypassPermissions",
            ],
            server,
        )
        assert proc.stdout is not None
        seen: list[dict[str, Any]] = []
        for line in proc.stdout:
            seen.append(json.loads(line))
            content = seen[-1].get("message", {}).get("content", [])
            if seen[-1]["type"] == "assistant" and content[-1]["type"] == "tool_use":
                proc.send_signal(signal.SIGINT)
                break
        rest, _ = proc.communicate(timeout=30)
    finally:
        server.stop()
    last = _lines(rest)[-1]
    assert proc.returncode == 130
    assert last["type"] == "result" and last["is_error"] is True
    assert last["subtype"] == "error_during_execution"
    assert last["terminal_reason"] == "aborted_tools"  # the interrupt stopped a running tool


async def test_unknown_and_miscased_tool_names_are_errors_for_the_model(env: Path) -> None:
    scenario = Scenario.of(
        Turn(
            [
                tool_use("Nope", {"x": 1}, id="t_unknown"),
                tool_use("bash", {"command": "touch lower.txt"}, id="t_case"),
            ]
        ),
        Turn([text("fine")], match=Match(tool_result_for="t_case")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env, permission_mode="bypassPermissions")
        events = await _collect(session, "go")
        assert events[-1].result_text == "fine" and not events[-1].is_error
        results = _tool_results(server.requests[-1].body)
        assert "No such tool available: Nope" in _content_text(results["t_unknown"])
        assert "No such tool available: bash" in _content_text(results["t_case"])
        assert all(r["is_error"] for r in results.values())
        assert not (env / "lower.txt").exists()
        await session.close()
        server.assert_done()


async def test_fifty_calls_in_one_message_each_get_one_result_in_order(env: Path) -> None:
    calls = [tool_use("Glob", {"pattern": f"*{i}"}, id=f"t_{i:02d}") for i in range(50)]
    scenario = Scenario.of(
        Turn(calls),
        Turn([text("all globbed")], match=Match(tool_result_for="t_49")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        events = await _collect(session, "go")
        assert events[-1].result_text == "all globbed"
        last_user = server.requests[-1].body["messages"][-1]
        ids = [b["tool_use_id"] for b in last_user["content"] if b.get("type") == "tool_result"]
        assert ids == [f"t_{i:02d}" for i in range(50)]
        await session.close()
        server.assert_done()


async def test_a_one_megabyte_tool_input_is_handled(env: Path) -> None:
    big = "x" * 1_000_000
    target = env / "big.txt"
    scenario = Scenario.of(
        Turn([tool_use("Write", {"file_path": str(target), "content": big}, id="t_big")]),
        Turn([text("written")], match=Match(tool_result_for="t_big")),
    )
    with ScriptedServer(scenario, json_chunk=65536) as server:
        session = await _session(server, env, permission_mode="bypassPermissions")
        events = await _collect(session, "go")
        assert events[-1].result_text == "written" and not events[-1].is_error
        assert target.read_text() == big
        await session.close()
        server.assert_done()


async def test_empty_text_block_is_never_sent_back(env: Path) -> None:
    scenario = Scenario.of(
        Turn([text(""), tool_use("Glob", {"pattern": "*"}, id="t_g")]),
        Turn([text("done")], match=Match(tool_result_for="t_g")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        events = await _collect(session, "go")
        assert events[-1].result_text == "done"
        for m in server.requests[-1].body["messages"]:
            for b in m["content"] if isinstance(m["content"], list) else []:
                assert not (b.get("type") == "text" and not b["text"].strip()), m
        await session.close()
        server.assert_done()


@pytest.mark.parametrize("reason", ["refusal", "pause_turn"])
async def test_other_stop_reasons_end_the_turn_cleanly(env: Path, reason: str) -> None:
    scenario = Scenario.of(
        Turn([text("I will not")], stop_reason=reason),
        Turn([text("hello")], match=Match(contains_text="next")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        events = await _collect(session, "go")
        fin = events[-1]
        assert fin.stop_reason == reason and fin.result_text == "I will not" and not fin.is_error
        if reason == "refusal":
            assert any(isinstance(e, Notice) and "refusal" in e.text for e in events)
        again = await _collect(session, "next")
        assert again[-1].result_text == "hello"
        await session.close()
        server.assert_done()


async def test_duplicate_tool_use_ids_in_one_message_are_made_unique(env: Path) -> None:
    scenario = Scenario.of(
        Turn(
            [
                tool_use("Bash", {"command": "echo one >> d.txt"}, id="t_dup"),
                tool_use("Bash", {"command": "echo two >> d.txt"}, id="t_dup"),
            ]
        ),
        Turn([text("done")], match=Match(tool_result_for="t_dup")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env, permission_mode="bypassPermissions")
        events = await _collect(session, "go")
        assert events[-1].result_text == "done"
        assert (env / "d.txt").read_text() == "one\ntwo\n"
        body = server.requests[-1].body
        uses = [b["id"] for b in body["messages"][-2]["content"] if b["type"] == "tool_use"]
        answered = [b["tool_use_id"] for b in body["messages"][-1]["content"]]
        # The API rejects repeated ids: each call gets its own, and its own result.
        assert uses[0] == "t_dup" and len(set(uses)) == 2 and answered == uses
        await session.close()
        server.assert_done()


async def test_a_message_with_only_a_thinking_block_ends_the_turn(env: Path) -> None:
    scenario = Scenario.of(
        Turn([thinking("hmm, let me think", signature="sig")]),
        Turn([text("after thinking")], match=Match(contains_text="and now")),
    )
    with ScriptedServer(scenario) as server:
        session = await _session(server, env)
        events = await _collect(session, "think")
        fin = events[-1]
        assert isinstance(fin, TurnFinished) and not fin.is_error and fin.result_text == ""
        again = await _collect(session, "and now?")
        assert again[-1].result_text == "after thinking"
        sent = server.requests[-1].body["messages"][1]
        assert sent["role"] == "assistant"
        assert sent["content"] == [
            {"type": "thinking", "thinking": "hmm, let me think", "signature": "sig"}
        ]
        await session.close()
        server.assert_done()


def test_torn_transcript_still_continues(harness: Harness) -> None:
    first = Scenario.of(Turn([text("first answer")]))
    args = ["--output-format", "json"]
    assert harness.run(["-p", "one", *args], first).rc == 0
    (path,) = harness.transcripts()
    with path.open("a", encoding="utf-8") as f:
        f.write('{"type": "assistant", "message": {"role": "assis')  # a write cut short
    second = Scenario.of(Turn([text("still here")], match=Match(contains_text="two")))
    run = harness.run(["-p", "two", "--continue", *args], second)
    assert run.rc == 0, run.stderr
    assert run.json()["result"] == "still here"
    sent = json.dumps(run.server.requests[0].body["messages"])
    assert "first answer" in sent


def test_broken_settings_file_is_a_clear_message(harness: Harness) -> None:
    (harness.project / ".nerve").mkdir()
    (harness.project / ".nerve" / "settings.json").write_text("{not json")
    run = harness.run(
        ["-p", "hi", "--output-format", "json"],
        Scenario.of(Turn([text("hello")])),
        check_done=False,
    )
    assert "Traceback" not in run.stderr
    assert "settings.json" in run.stderr and "ignored" in run.stderr, run.stderr
    assert run.json()["result"] == "hello"  # stdout is still the one result object
