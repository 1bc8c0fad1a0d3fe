"""``nerve --input-format stream-json`` over raw pipes: the control protocol and bad input
(malformed lines, unknown subtypes, answers to nothing) never hang or end the session."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness

__all__ = ["harness"]

SDK_ARGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]


def user(content: Any) -> str:
    msg = {"type": "user", "message": {"role": "user", "content": content}}
    return json.dumps({**msg, "parent_tool_use_id": None, "session_id": ""})


def control(request_id: str, subtype: str, **fields: Any) -> str:
    body = {"subtype": subtype, **fields}
    return json.dumps({"type": "control_request", "request_id": request_id, "request": body})


class Pipe:
    def __init__(self, harness: Harness, server: Any, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [NERVE, *args],
            cwd=harness.project,
            env=harness.env_for(server),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def send(self, *lines: str) -> None:
        assert self.proc.stdin is not None
        for line in lines:
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def until(self, pred: Any) -> list[dict[str, Any]]:
        """Frames read up to and including the first that ``pred`` accepts."""
        assert self.proc.stdout is not None
        seen = []
        for line in self.proc.stdout:
            seen.append(json.loads(line))
            if pred(seen[-1]):
                return seen
        raise AssertionError(f"stdout ended first: {seen}\n{self.proc.stderr.read()}")  # type: ignore[union-attr]

    def close(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err


def response_to(request_id: str) -> Any:
    return lambda f: f["type"] == "control_response" and f["response"]["request_id"] == request_id


def test_initialize_then_two_turns_then_stdin_closes(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([text("one")]), Turn([text("two")], match=Match(contains_text="second"))
    )
    server = harness.server(scenario)
    try:
        pipe = Pipe(harness, server, SDK_ARGS)
        pipe.send(control("req_1", "initialize", hooks=None))
        init = pipe.until(response_to("req_1"))[-1]["response"]
        assert init["subtype"] == "success" and init["response"]["output_style"] == "default"
        pipe.send(user("first"))
        first = pipe.until(lambda f: f["type"] == "result")
        pipe.send(user([{"type": "text", "text": "second"}]))
        second = pipe.until(lambda f: f["type"] == "result")
        rc, rest, err = pipe.close()
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert [f["type"] for f in first] == ["system", "assistant", "result"]
    assert first[-1]["result"] == "one" and second[-1]["result"] == "two"
    assert first[-1]["session_id"] == second[-1]["session_id"]
    # Claude Code's counters over the session's results: which one, and the usage since the last
    assert [first[-1]["result_index"], second[-1]["result_index"]] == [0, 1]
    (one,) = first[-1]["model_usage_since_last_result"].values()
    (two,) = second[-1]["model_usage_since_last_result"].values()
    (total,) = second[-1]["modelUsage"].values()
    assert one["inputTokens"] == two["inputTokens"] == 10 and total["inputTokens"] == 20
    assert rc == 0 and rest == "", err


def test_bad_lines_are_reported_and_the_session_goes_on(harness: Harness) -> None:
    server = harness.server(Scenario.of(Turn([text("still here")])))
    try:
        pipe = Pipe(harness, server, SDK_ARGS)
        pipe.send(
            "this is not json",
            "[1, 2]",
            json.dumps({"type": "telepathy"}),
            control("req_x", "teleport"),
            json.dumps({"type": "control_request", "request": {"subtype": "interrupt"}}),
            json.dumps({"type": "control_response", "response": {"request_id": "nope"}}),
            json.dumps({"type": "user", "message": {"role": "user", "content": []}}),
        )
        answer = pipe.until(response_to("req_x"))[-1]["response"]
        pipe.send(user("are you there?"))
        frames = pipe.until(lambda f: f["type"] == "result")
        rc, _, err = pipe.close()
    finally:
        server.stop()
    assert answer["subtype"] == "error" and "teleport" in answer["error"]
    assert frames[-1]["result"] == "still here" and rc == 0
    for line, complaint in [
        (1, "not JSON"),
        (2, "expected a JSON object"),
        (3, "unknown message type 'telepathy'"),
        (5, 'without a "request_id"'),
        (6, "unknown request id 'nope'"),
        (7, "no text content"),
    ]:
        said = [
            x for x in err.splitlines() if x.startswith(f"nerve: stream-json input line {line}:")
        ]
        assert len(said) == 1 and complaint in said[0] and said[0].endswith("skipped"), err
    assert "Traceback" not in err


def test_stdin_closing_mid_turn_lets_the_turn_finish_and_the_session_resumes(
    harness: Harness,
) -> None:
    server = harness.server(Scenario.of(Turn([text("finished anyway")])))
    try:
        pipe = Pipe(harness, server, SDK_ARGS)
        pipe.send(user("work"))
        started = pipe.until(lambda f: f["type"] == "system")  # the turn is under way
        rc, out, err = pipe.close()  # stdin closes (the SDK closes it after its prompt)
    finally:
        server.stop()
    frames = started + [json.loads(x) for x in out.splitlines()]
    assert rc == 0, err
    assert frames[-1]["type"] == "result" and frames[-1]["result"] == "finished anyway"
    again = harness.run(
        ["-p", "what did you say?", "--resume", frames[-1]["session_id"]],
        Scenario.of(Turn([text("I said: finished anyway")])),
    )
    assert again.rc == 0, again.stderr
    assert "finished anyway" in json.dumps(again.server.requests[0].body["messages"])


def test_stream_json_input_needs_stream_json_output(harness: Harness) -> None:
    run = harness.run(["--input-format", "stream-json"], None)
    assert run.rc == 2 and "needs --output-format stream-json" in run.stderr
