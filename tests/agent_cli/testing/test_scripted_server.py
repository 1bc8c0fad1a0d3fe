"""The scripted Messages API server, exercised over real loopback HTTP (raw httpx2 and the SDK)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from agent_cli.testing import (
    Match,
    Scenario,
    ScenarioError,
    ScriptedServer,
    Turn,
    cut,
    http_error,
    overloaded,
    rate_limit,
    server_error,
    stream_error,
    text,
    tool_use,
)

ROOT = Path(__file__).resolve().parents[3]
HI: list[Any] = [{"role": "user", "content": "hi"}]


def _body(messages: list[dict[str, Any]] | None = None, stream: bool = True) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 100, "messages": messages or HI, "stream": stream}


def _sse(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def _streamed_text(raw: str) -> str:
    return "".join(
        d["delta"]["text"] for _, d in _sse(raw) if d.get("delta", {}).get("type") == "text_delta"
    )


def _sdk(srv: ScriptedServer, retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-test", base_url=srv.base_url, max_retries=retries)


def _answer(tool_id: str, content: str = "ok") -> Any:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": content}],
    }


def _call(tool_id: str) -> list[Any]:
    """An assistant message with one tool_use and the user message answering it."""
    call = {"type": "tool_use", "id": tool_id, "name": "X", "input": {}}
    return [{"role": "assistant", "content": [call]}, _answer(tool_id)]


def test_stream_event_order_and_chunking() -> None:
    words = "The quick brown fox jumps over the lazy dog"
    scenario = Scenario.of(
        Turn(
            [text(words), tool_use("Bash", {"command": "git status", "timeout": 30})],
            input_tokens=42,
            output_tokens=17,
            cache_read_input_tokens=7,
        )
    )
    with ScriptedServer(scenario) as srv, httpx2.Client() as http:
        resp = http.post(f"{srv.base_url}/v1/messages", json=_body())
        assert resp.status_code == 200
        assert resp.headers["transfer-encoding"] == "chunked"
        assert resp.headers["content-type"].startswith("text/event-stream")
        events = _sse(resp.text)
        srv.assert_done()
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["id"].startswith("msg_") and start["model"] == "claude-test"
    assert start["usage"]["input_tokens"] == 42 and start["usage"]["cache_read_input_tokens"] == 7
    text_deltas = [
        d["delta"]["text"] for n, d in events if d.get("delta", {}).get("type") == "text_delta"
    ]
    json_deltas = [
        d["delta"]["partial_json"]
        for n, d in events
        if d.get("delta", {}).get("type") == "input_json_delta"
    ]
    assert len(text_deltas) > 2 and "".join(text_deltas) == words
    assert len(json_deltas) > 2 and json.loads("".join(json_deltas)) == {
        "command": "git status",
        "timeout": 30,
    }
    # per block: start, deltas, stop — in index order
    block_events = [(n, d["index"]) for n, d in events if n.startswith("content_block")]
    assert block_events[0] == ("content_block_start", 0)
    assert block_events.index(("content_block_stop", 0)) < block_events.index(
        ("content_block_start", 1)
    )
    tool_start = next(d for n, d in events if n == "content_block_start" and d["index"] == 1)
    assert tool_start["content_block"] == {
        "type": "tool_use",
        "id": "toolu_s0_1",
        "name": "Bash",
        "input": {},
    }
    delta = events[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use" and delta["usage"]["output_tokens"] == 17


def test_sdk_streaming_and_non_streaming_round_trip() -> None:
    scenario = Scenario.of(
        [text("Looking."), tool_use("Read", {"file_path": "/tmp/x"}, id="toolu_read")],
        Turn([text("Done.")], match=Match(tool_result_for="toolu_read")),
    )
    with ScriptedServer(scenario) as srv:
        client = _sdk(srv)
        with client.messages.stream(model="m", max_tokens=10, messages=HI) as stream:
            final = stream.get_final_message()
        assert final.stop_reason == "tool_use"
        assert final.content[1].type == "tool_use" and final.content[1].input == {
            "file_path": "/tmp/x"
        }
        history: list[Any] = [
            *HI,
            {"role": "assistant", "content": [b.model_dump() for b in final.content]},
        ]
        msg = client.messages.create(
            model="m", max_tokens=10, messages=[*history, _answer("toolu_read")]
        )
        assert msg.content[0].type == "text" and msg.content[0].text == "Done."
        assert msg.stop_reason == "end_turn"
        srv.assert_done()
        assert [r.outcome for r in srv.requests] == ["turn", "turn"]
        assert (
            srv.requests[0].headers["authorization"] == "Bearer sk-test"
        )  # SDK 2.16 sends a bearer
        assert srv.requests[0].body["stream"] is True
        assert "stream" not in srv.requests[1].body or srv.requests[1].body["stream"] is False


def test_http_faults_then_the_same_turn_is_served() -> None:
    scenario = Scenario.of(
        Turn([text("after 429")], faults=[rate_limit(retry_after="7")]),
        Turn([text("after 529")], faults=[overloaded()]),
        Turn([text("after 500 twice")], faults=[server_error(times=2)]),
    )
    with ScriptedServer(scenario) as srv, httpx2.Client() as http:
        url = f"{srv.base_url}/v1/messages"
        r = http.post(url, json=_body(stream=False))
        assert r.status_code == 429 and r.headers["retry-after"] == "7"
        assert r.json()["error"]["type"] == "rate_limit_error"
        assert http.post(url, json=_body(stream=False)).json()["content"][0]["text"] == "after 429"
        r = http.post(url, json=_body(stream=False))
        assert r.status_code == 529 and r.json()["error"]["type"] == "overloaded_error"
        assert http.post(url, json=_body(stream=False)).json()["content"][0]["text"] == "after 529"
        assert [http.post(url, json=_body()).status_code for _ in range(2)] == [500, 500]
        assert _streamed_text(http.post(url, json=_body()).text) == "after 500 twice"
        srv.assert_done()
    assert [r.turn for r in srv.requests] == [0, 0, 1, 1, 2, 2, 2]


def test_in_stream_overloaded_error_reaches_the_sdk_as_status_200() -> None:
    with ScriptedServer(
        Scenario.of(Turn([text("ok now")], faults=[stream_error(after_events=3)]))
    ) as srv:
        client = _sdk(srv)
        with pytest.raises(anthropic.APIStatusError) as info:
            with client.messages.stream(model="m", max_tokens=10, messages=HI) as stream:
                stream.get_final_message()
        assert info.value.status_code == 200 and info.value.type == "overloaded_error"
        with client.messages.stream(model="m", max_tokens=10, messages=HI) as stream:
            assert stream.get_final_text() == "ok now"
        srv.assert_done()
        assert "#1 error after 3 events" in srv.marks


def test_cut_mid_stream_raises_remote_protocol_error() -> None:
    with ScriptedServer(
        Scenario.of(Turn([text("a long enough text")], faults=[cut(after_events=4)]))
    ) as srv:
        client = _sdk(srv)
        seen: list[str] = []
        # anthropic 2.17 wraps a failed body read in APIConnectionError; earlier releases let
        # httpx's error through. Either way the cause is the cut the server made.
        with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)) as raised:
            with client.messages.stream(model="m", max_tokens=10, messages=HI) as stream:
                for ev in stream:
                    seen.append(ev.type)
        cause = raised.value
        if isinstance(cause, anthropic.APIConnectionError):
            cause = cause.__cause__
        assert isinstance(cause, httpx2.RemoteProtocolError)
        assert "content_block_delta" in seen and "message_stop" not in seen
        with client.messages.stream(model="m", max_tokens=10, messages=HI) as stream:
            assert stream.get_final_text() == "a long enough text"
        srv.assert_done()


def test_cut_that_consumes_the_turn_moves_on() -> None:
    scenario = Scenario.of(
        Turn([text("partial")], faults=[cut(after_events=2, consumes_turn=True)]), [text("next")]
    )
    with ScriptedServer(scenario) as srv, httpx2.Client() as http:
        with pytest.raises(httpx2.RemoteProtocolError):
            http.post(f"{srv.base_url}/v1/messages", json=_body())
        assert _streamed_text(http.post(f"{srv.base_url}/v1/messages", json=_body()).text) == "next"
        srv.assert_done()


def test_slow_chunks_pace_the_stream() -> None:
    turn = Turn([text("one two three four")], event_delay=0.02)
    with ScriptedServer(Scenario.of(turn)) as srv, httpx2.Client() as http:
        began = time.monotonic()
        with http.stream("POST", f"{srv.base_url}/v1/messages", json=_body()) as resp:
            pieces = list(resp.iter_raw())
        elapsed = time.monotonic() - began
    n_events = len([m for m in srv.marks if m.startswith("#1 ")])
    assert len(pieces) > 3  # arrived over time, not as one body
    assert elapsed >= 0.02 * (n_events - 1)  # a floor: the delays really happened


def test_unexpected_request_fails_loudly_and_assert_done_raises() -> None:
    with ScriptedServer(Scenario.of([text("only turn")])) as srv, httpx2.Client() as http:
        url = f"{srv.base_url}/v1/messages"
        assert http.post(url, json=_body()).status_code == 200
        r = http.post(url, json=_body(stream=False))
        assert r.status_code == 500 and r.headers["x-should-retry"] == "false"
        message = r.json()["error"]["message"]
        assert message.startswith("scripted server: unexpected request #2: scenario exhausted")
        assert srv.requests[1].outcome == "unexpected"
        with pytest.raises(AssertionError, match="unexpected request #2"):
            srv.assert_done()


def test_sdk_does_not_retry_an_unexpected_request() -> None:
    with ScriptedServer(Scenario([])) as srv:
        with pytest.raises(anthropic.InternalServerError, match="unexpected request #1"):
            _sdk(srv, retries=3).messages.create(model="m", max_tokens=5, messages=HI)
        assert len(srv.requests) == 1


def test_unconsumed_turns_make_assert_done_raise() -> None:
    with ScriptedServer(Scenario.of([text("a")], [text("b")])) as srv, httpx2.Client() as http:
        http.post(f"{srv.base_url}/v1/messages", json=_body())
        assert srv.unconsumed_turns() == [1]
        with pytest.raises(AssertionError, match=r"turn\(s\) \[1\] never served"):
            srv.assert_done()


def test_match_predicates() -> None:
    assistant = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "X", "input": {}}],
    }
    scenario = Scenario.of(
        Turn([text("a")], match=Match(contains_text="build it")),
        Turn([text("b")], match=Match(tool_result_for="t1")),
        Turn(
            [text("c")], match=Match(predicate=lambda b: b["max_tokens"] == 7, description="max 7")
        ),
    )
    with ScriptedServer(scenario) as srv, httpx2.Client() as http:
        url = f"{srv.base_url}/v1/messages"
        ok = http.post(url, json=_body([{"role": "user", "content": "please build it now"}]))
        assert ok.status_code == 200
        bad = http.post(url, json=_body([*HI, assistant, _answer("t1")][:1]))
        assert bad.status_code == 500 and "turn 1 match failed" in bad.json()["error"]["message"]
        good = http.post(url, json=_body([*HI, assistant, _answer("t1")]))
        assert good.status_code == 200
        wrong = http.post(url, json=_body())  # max_tokens 100
        assert "predicate max 7 failed" in wrong.json()["error"]["message"]
        assert http.post(url, json={**_body(), "max_tokens": 7}).status_code == 200
    assert len(srv.failures) == 2


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (
            _body(
                [
                    *HI,
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t9", "name": "X", "input": {}}],
                    },
                    {"role": "user", "content": "what happened?"},
                ]
            ),
            "tool_use id(s) ['t9'] without a tool_result",
        ),
        (_body([*HI, {"role": "assistant", "content": []}, *HI]), "empty content"),
        (_body([*HI, *HI]), "roles must alternate"),
        (_body([{"role": "assistant", "content": "x"}]), "roles must alternate"),
        ({"model": "m", "messages": HI}, "'max_tokens' is missing"),
        ({"max_tokens": 5, "messages": HI}, "'model' is missing"),
        ({"model": "m", "max_tokens": 5, "messages": []}, "'messages' is missing or empty"),
        (_body([_answer("nobody")]), "no matching tool_use"),
        (_body([*HI, *_call("t1"), *_call("t1")]), "tool_use id 't1' is not unique"),
        (
            _body([*HI, _call("t1")[0], {"role": "user", "content": _answer("t1")["content"] * 2}]),
            "more than one tool_result for ['t1']",
        ),
    ],
)
def test_request_validation_catches_client_bugs(body: dict[str, Any], needle: str) -> None:
    with ScriptedServer(Scenario.of([text("never")])) as srv, httpx2.Client() as http:
        r = http.post(f"{srv.base_url}/v1/messages", json=body)
        assert r.status_code == 500
        assert needle in r.json()["error"]["message"]
        assert srv.unconsumed_turns() == [0]  # a rejected request consumes nothing
        with pytest.raises(
            AssertionError, match=needle.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
        ):
            srv.assert_done()


def test_malformed_body_and_wrong_path_are_unexpected() -> None:
    with ScriptedServer(Scenario.of([text("never")])) as srv, httpx2.Client() as http:
        r = http.post(f"{srv.base_url}/v1/messages", content=b"{not json")
        assert r.status_code == 500 and "body is not a JSON object" in r.text
        r = http.get(f"{srv.base_url}/v1/models")
        assert r.status_code == 500 and "GET /v1/models is not POST /v1/messages" in r.text
    assert len(srv.failures) == 2


def test_hold_waits_for_the_gate_or_times_out() -> None:
    scenario = Scenario.of(
        Turn([tool_use("A", {}), text("end")], holds={0: "g1"}),
        Turn([tool_use("B", {}), text("end")], holds={0: "never"}),
    )
    srv = ScriptedServer(scenario, gate_timeout=0.1)
    with srv, httpx2.Client() as http:
        srv.gate("g1").set()
        http.post(f"{srv.base_url}/v1/messages", json=_body())
        http.post(f"{srv.base_url}/v1/messages", json=_body())
    assert "#1 gate g1 opened" in srv.marks and "#2 gate never timed out" in srv.marks
    assert srv.marks.index("#1 gate g1 opened") < srv.marks.index("#1 message_stop")


def test_event_holds_pause_after_any_event() -> None:
    scenario = Scenario.of(Turn([text("hello")], event_holds={0: "after-start", 3: "mid-text"}))
    srv = ScriptedServer(scenario)
    with srv, httpx2.Client() as http:
        srv.gate("after-start").set()
        srv.gate("mid-text").set()
        http.post(f"{srv.base_url}/v1/messages", json=_body())
    marks = srv.marks
    assert marks[:2] == ["#1 message_start", "#1 gate after-start opened"]
    assert marks.index("#1 gate mid-text opened") == marks.index("#1 content_block_delta[0]") + 1
    again = Scenario.from_dict(scenario.to_dict())
    assert again.turns[0].event_holds == {0: "after-start", 3: "mid-text"}


def test_scenario_json_round_trip_and_errors(tmp_path: Path) -> None:
    scenario = Scenario.of(
        [text("hi"), tool_use("Bash", {"command": "ls"})],
        Turn(
            [text("bye")],
            match=Match(tool_result_for="toolu_s0_1", contains_text="x"),
            faults=[rate_limit(retry_after=3), cut(2), http_error(401, "authentication_error")],
            holds={0: "g"},
            cache_creation_input_tokens=9,
        ),
    )
    path = tmp_path / "s.json"
    scenario.to_json(path)
    again = Scenario.from_json(path)
    assert again.to_dict() == scenario.to_dict()
    assert again.turns[1].faults[0].retry_after == "3"

    declarative = {
        "turns": [{"blocks": [{"type": "text", "text": "t"}], "faults": [{"kind": "overloaded"}]}]
    }
    fault = Scenario.from_dict(declarative).turns[0].faults[0]
    assert (fault.kind, fault.status, fault.error_type) == ("http", 529, "overloaded_error")

    bad = tmp_path / "bad.json"
    for content, needle in [
        ("{nope", "cannot read scenario"),
        ('{"turns": [{"blocks": []}]}', "non-empty 'blocks'"),
        ('{"turns": [{"blocks": [{"type": "image"}]}]}', "unsupported block type"),
        (
            '{"turns": [{"blocks": [{"type": "text", "text": "x"}], "faults": [{"kind": "zap"}]}]}',
            "unknown fault kind",
        ),
        (
            '{"turns": [{"blocks": [{"type": "text", "text": "x"}], "colour": 1}]}',
            "unknown turn field",
        ),
        (
            '{"turns": [{"blocks": [{"type": "text", "text": "x"}], "input_tokens": "many"}]}',
            "'input_tokens' must be a non-negative integer",
        ),
        (
            '{"turns": [{"blocks": [{"type": "text", "text": "x"}], "event_delay": "slow"}]}',
            "'event_delay' must be a non-negative number",
        ),
    ]:
        bad.write_text(content)
        with pytest.raises(ScenarioError, match=needle):
            Scenario.from_json(bad)


def test_cli_mode_with_port_file_and_report(tmp_path: Path) -> None:
    scenario_path = tmp_path / "scenario.json"
    Scenario.of([text("from a subprocess")], [text("never asked")]).to_json(scenario_path)
    port_file, report = tmp_path / "port", tmp_path / "report.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_cli.testing.scripted_server",
            "--scenario",
            str(scenario_path),
            "--port-file",
            str(port_file),
            "--report",
            str(report),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert proc.poll() is None, "server exited early"
            assert time.monotonic() < deadline, "no port file"
            time.sleep(0.02)
        port = int(port_file.read_text())
        r = httpx2.post(f"http://127.0.0.1:{port}/v1/messages", json=_body(stream=False))
        assert r.json()["content"] == [{"type": "text", "text": "from a subprocess"}]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    data = json.loads(report.read_text())
    assert data["ok"] is False and data["unconsumed_turns"] == [1]
    assert [r["outcome"] for r in data["requests"]] == ["turn"]


def test_cli_mode_rejects_a_bad_scenario(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_cli.testing.scripted_server",
            "--scenario",
            str(bad),
            "--port-file",
            str(tmp_path / "p"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "bad scenario" in out.stderr and "Traceback" not in out.stderr
