"""``--output-format stream-json`` (and ``json``) writes Claude Code's frames field for field.

The fixture holds the field set of every kind of frame the real Claude Code CLI (2.1.337, the
binary claude-agent-sdk bundles) wrote for the runs of ``stream_json_frames.RUNS`` against the
scripted server, captured by ``bench/capture_claude_frames.py``; public captures it was checked
against: mixofreality-studio/archistrator (``server/internal/resourceaccess/agenticjob/testdata/
streamjson/``, Claude Code 2.1.220) and hrntknr/claude-code-protocol (``protocol.go``). Nerve plays
the same runs here; every kind of frame Claude Code wrote must come out of Nerve with every key
the fixture names, at the same nesting and of the same type, unless the fixture's ``_not_sent``
says why Nerve leaves it out. The Agent SDK's own parser must read every frame too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, server_error, text, thinking, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness
from tests.agent_cli.frontends.stream_json.frames import RUNS, drive, frame_kind, missing_fields

__all__ = ["harness"]

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "stream_json_frames.json").read_text())
NOT_SENT: dict[str, Any] = FIXTURE["_not_sent"]
KINDS = [k for k in FIXTURE if not k.startswith("_")]


def _kind(frame: dict[str, Any]) -> str:
    return frame_kind(frame)


def _expected(kind: str) -> Any:
    """The fixture's field set for ``kind`` without what ``_not_sent`` explains."""
    shape = json.loads(json.dumps(FIXTURE[kind]))
    for path in NOT_SENT.get(kind, {}):
        *parents, last = path.split(".")
        node = shape
        for key in parents:
            node = node[key]
        del node[last]
    return shape


def _play(harness: Harness, name: str) -> list[dict[str, Any]]:
    (run,) = (r for r in RUNS if r.name == name)
    harness.env["NERVE_TRUST_ALL"] = "1"  # Claude Code's print mode trusts the folder too
    (harness.project / "notes.txt").write_text("alpha\n")
    if run.setup is not None:
        first = harness.run(run.setup[0], run.setup[1](harness.project))
        assert first.rc == 0, first.stderr
    if run.interrupt is not None:
        server = harness.server(run.scenario(harness.project))
        try:
            live = subprocess.Popen(
                [NERVE, *run.args],
                cwd=harness.project,
                env=harness.env_for(server),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            return drive(live, run.interrupt)
        finally:
            server.stop()
    done = harness.run(run.args, run.scenario(harness.project), check_done=False)
    assert "Traceback" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_fixture_is_a_capture_and_says_what_nerve_leaves_out() -> None:
    assert FIXTURE["_captured_with"].endswith("(Claude Code)")
    for kind in ("system/init", "assistant", "user/tool_result", "result/success"):
        assert kind in KINDS
    for kind in (
        "result/error_max_turns",
        "result/error_max_budget_usd",
        "stream_event/message_start",
    ):
        assert kind in KINDS
    for key, what in NOT_SENT.items():
        kind, _, run = key.partition("@")
        assert kind in KINDS and (not run or run in FIXTURE["_runs"][kind]), key
        reasons = what.values() if isinstance(what, dict) else [what]
        assert all(isinstance(r, str) and len(r) > 20 for r in reasons), kind
        for path in what if isinstance(what, dict) else []:
            _expected(kind)  # every left-out path names a field of the capture
            assert path.split(".")[0] in FIXTURE[kind], (key, path)


def test_the_checker_catches_a_renamed_or_missing_field() -> None:
    expected = _expected("result/success")
    good = {k: v for k, v in expected.items()}
    good["modelUsage"] = {"m": expected["modelUsage"]["*"]}
    good["model_usage_since_last_result"] = {}
    assert missing_fields(expected, good) == []
    good["durationMs"] = good.pop("duration_ms")
    assert missing_fields(expected, good) == [".duration_ms: missing"]
    good["modelUsage"]["m"] = dict(good["modelUsage"]["m"], costUSD="0.1")
    assert ".modelUsage.m.costUSD: expected a number, got '0.1'" in missing_fields(expected, good)
    frame = json.loads(json.dumps(_expected("assistant")))
    del frame["message"]["usage"]["cache_read_input_tokens"], frame["timestamp"]
    assert len(missing_fields(_expected("assistant"), frame)) == 2


@pytest.mark.parametrize("name", [r.name for r in RUNS])
def test_every_frame_claude_code_writes_nerve_writes_with_its_fields(
    harness: Harness, name: str
) -> None:
    frames = _play(harness, name)
    produced = {_kind(f) for f in frames}
    wanted = {k for k in FIXTURE["_runs"] if name in FIXTURE["_runs"][k]}
    left_out = {k for k in wanted if isinstance(NOT_SENT.get(k), str)}
    left_out |= {k for k in wanted if f"{k}@{name}" in NOT_SENT}  # not in this run only
    assert wanted - left_out <= produced, (sorted(wanted - left_out - produced), name)
    for frame in frames:
        kind = _kind(frame)
        if kind in FIXTURE:
            assert missing_fields(_expected(kind), frame) == [], (kind, frame)
    assert len({f["uuid"] for f in frames}) == len(frames)
    assert len({f["session_id"] for f in frames}) == 1


def _run(harness: Harness) -> tuple[Any, list[dict[str, Any]]]:
    notes = harness.project / "notes.txt"
    notes.write_text("alpha\n")
    scenario = Scenario.of(
        Turn(
            [text("Reading."), tool_use("Read", {"file_path": str(notes)}, id="t_read")],
            faults=[server_error(times=1)],
        ),
        Turn([text("It says alpha.")], match=Match(tool_result_for="t_read")),
    )
    run = harness.run(["-p", "read notes", "--output-format", "stream-json", "--verbose"], scenario)
    assert run.rc == 0, run.stderr
    return run, [json.loads(line) for line in run.stdout.splitlines()]


def test_a_tool_turn_in_claude_codes_frames(harness: Harness) -> None:
    run, frames = _run(harness)
    kinds = [_kind(f) for f in frames]
    assert kinds == [
        "system/init",
        "system/api_retry",
        "assistant",  # as Claude Code: a frame per content block of the message
        "assistant",
        "user/tool_result",
        "assistant",
        "result/success",
    ]
    for frame in frames:
        assert missing_fields(_expected(_kind(frame)), frame) == [], frame
    init, retry, said, ask, tool, answer, result = frames
    session = result["session_id"]
    assert all(f["session_id"] == session for f in frames)
    assert len({f["uuid"] for f in frames}) == len(frames)
    assert "Read" in init["tools"] and init["cwd"] == str(harness.project)
    assert init["permissionMode"] == "default" and init["apiKeySource"] == "ANTHROPIC_API_KEY"
    assert "compact" in init["slash_commands"] and "clear" not in init["slash_commands"]
    assert init["served_by_anthropic"] is False and init["sandbox_enabled"] is False
    assert retry["attempt"] == 1 and retry["max_retries"] == 10
    assert retry["error_status"] == 500 and retry["error"] == "server_error"
    assert said["message"]["content"] == [{"type": "text", "text": "Reading."}]
    assert ask["message"]["content"] == [
        {
            "type": "tool_use",
            "id": "t_read",
            "name": "Read",
            "input": {"file_path": str(harness.project / "notes.txt")},
        },
    ]
    assert said["message"]["id"] == ask["message"]["id"] != answer["message"]["id"]
    assert ask["message"]["stop_reason"] is None and ask["message"]["model"]
    assert ask["request_id"] == said["request_id"] == "req_scripted_0002"  # the retried one
    block = tool["message"]["content"][0]
    assert block["tool_use_id"] == "t_read" and "alpha" in json.dumps(block["content"])
    assert tool["tool_result_meta"] == [
        {
            "id": "t_read",
            "permission_decision": {
                "decision": "accept",
                "source": "config",
                "reason_type": "workingDir",
            },
        }
    ]
    assert tool["tool_use_result"]  # the Read tool's own output
    assert answer["message"]["content"] == [{"type": "text", "text": "It says alpha."}]
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "It says alpha." and result["num_turns"] == 2
    assert result["stop_reason"] == "end_turn" and result["terminal_reason"] == "completed"
    assert 0 < result["duration_api_ms"] <= result["duration_ms"]
    assert result["time_to_request_ms"] <= result["ttft_stream_ms"] <= result["ttft_ms"]
    assert result["ttft_ms"] <= result["duration_ms"]
    (usage,) = result["modelUsage"].values()
    assert usage["costUSD"] == result["total_cost_usd"] and usage["costBasis"] == "list"
    assert usage["inputTokens"] == 20 and usage["provider"] == "firstParty"
    # what the server was sent is what the frames say
    sent = run.server.requests[-1].body["messages"][1]["content"]
    assert sent == said["message"]["content"] + ask["message"]["content"]


def test_the_agent_sdks_parser_reads_every_frame(harness: Harness) -> None:
    parser = pytest.importorskip(
        "claude_agent_sdk._internal.message_parser",
        reason="claude-agent-sdk is not installed (pip install -e '.[test]' brings it)",
    )
    sdk = pytest.importorskip("claude_agent_sdk")
    _, frames = _run(harness)
    parsed = [parser.parse_message(f) for f in frames]
    assert [type(p).__name__ for p in parsed] == [
        "SystemMessage",
        "SystemMessage",
        "AssistantMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    ask, tool, result = parsed[3], parsed[4], parsed[6]
    assert isinstance(ask.content[0], sdk.ToolUseBlock) and ask.content[0].name == "Read"
    assert isinstance(tool.content[0], sdk.ToolResultBlock)
    assert result.num_turns == 2 and result.result == "It says alpha."
    assert result.total_cost_usd is not None and result.usage is not None


def test_json_output_is_the_same_result_object(harness: Harness) -> None:
    run = harness.run(["-p", "hi", "--output-format", "json"], Scenario.of(Turn([text("hello")])))
    assert run.rc == 0, run.stderr
    assert missing_fields(_expected("result/success"), run.json()) == []


def test_partial_messages_stream_every_raw_event_before_the_message(harness: Harness) -> None:
    """Each API event is a ``stream_event`` frame as it arrives (after a ``status`` frame for the
    request): thinking, signature, text and tool input deltas, block starts and stops,
    message_delta and message_stop, then the ``assistant`` frames they build (one a block);
    the tool's ``user`` frame; the next message likewise."""
    words = "one two three four five six seven eight"
    first = Turn([thinking("Let me look."), text(words), tool_use("Glob", {"pattern": "*"}, "g1")])
    run = harness.run(
        ["-p", "count", "--output-format", "stream-json", "--include-partial-messages"],
        Scenario.of(first, Turn([text("done")])),
    )
    assert run.rc == 0, run.stderr
    frames = [json.loads(line) for line in run.stdout.splitlines()]
    kinds = [f["type"] for f in frames]
    assert kinds[0] == "system" and kinds[-1] == "result"
    assert [f.get("status") for f in frames if f.get("subtype") == "status"] == ["requesting"] * 2
    events = [f for f in frames if f["type"] == "stream_event"]
    assert "ping" not in {f["event"]["type"] for f in events}  # keep-alives are not passed on
    assert all(f["session_id"] == frames[0]["session_id"] for f in events)
    assert all(f["parent_tool_use_id"] is None and f["uuid"] for f in events)
    assert len({f["uuid"] for f in frames}) == len(frames)
    # the first message: its events, then its assistant frames, then the tool result
    a1 = kinds.index("assistant")
    assert kinds[a1 : a1 + 4] == ["assistant", "assistant", "assistant", "user"]
    blocks = [frames[a1 + i]["message"]["content"][0]["type"] for i in range(3)]
    assert blocks == ["thinking", "text", "tool_use"]
    one = [f["event"] for f in frames[:a1] if f["type"] == "stream_event"]
    msg_id = one[0]["message"]["id"]
    assert {f["api_message_id"] for f in frames[:a1] if f["type"] == "stream_event"} == {msg_id}
    types = [e["type"] for e in one]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    starts = [e["content_block"]["type"] for e in one if e["type"] == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    assert types.count("content_block_stop") == 3
    deltas = {e["delta"]["type"] for e in one if e["type"] == "content_block_delta"}
    assert {"thinking_delta", "signature_delta", "text_delta", "input_json_delta"} <= deltas
    said = "".join(
        e["delta"]["text"]
        for e in one
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )
    assert said == words
    assert one[-2]["delta"]["stop_reason"] == "tool_use"
    # the second message after the tool result, then its assistant frame
    a2 = kinds.index("assistant", a1 + 4)
    two = [f["event"]["type"] for f in frames[a1 + 4 : a2] if f["type"] == "stream_event"]
    assert two[0] == "message_start" and two[-1] == "message_stop"
    assert kinds[a2 + 1 :] == ["result"]
    assert frames[-1]["begun_message_ids"] == [msg_id, frames[a2]["message"]["id"]]


def test_a_session_start_hook_is_announced_before_init(harness: Harness) -> None:
    """As Claude Code: ``hook_started`` and ``hook_response`` (its output, exit code, outcome)
    for each SessionStart hook, before the ``init`` frame."""
    frames = _play(harness, "session_start_hook")
    kinds = [_kind(f) for f in frames]
    assert kinds[:3] == ["system/hook_started", "system/hook_response", "system/init"]
    started, response = frames[0], frames[1]
    assert started["hook_id"] == response["hook_id"]
    assert started["hook_name"] == response["hook_name"] == "SessionStart:startup"
    assert response["stdout"] == response["output"] == "started-context\n"
    assert response["exit_code"] == 0 and response["outcome"] == "success"


def test_compact_in_print_mode_writes_claude_codes_frames(harness: Harness) -> None:
    """``nerve -c -p /compact --output-format stream-json``: the compaction's status frames,
    init, the boundary, the summary the conversation now starts with, the command's output
    echoed as a user message, then a result saying which command ran."""
    frames = _play(harness, "compact")
    kinds = [_kind(f) for f in frames]
    assert kinds == [
        "system/status",
        "system/status",
        "system/init",
        "system/compact_boundary",
        "user",
        "user/replay",
        "result/success/local_command",
    ]
    assert frames[0]["status"] == "compacting" and frames[1]["compact_result"] == "success"
    meta = frames[3]["compact_metadata"]
    assert meta["trigger"] == "manual" and meta["pre_tokens"] > 0 and meta["post_tokens"] > 0
    assert frames[3]["logical_parent_uuid"]
    assert "We said hello." in json.dumps(frames[4]["message"])
    assert frames[5]["local_command_run"] == {"command": "compact", "args": ""}
    assert frames[6]["local_command"] == "compact" and frames[6]["num_turns"] == 0


def test_an_auto_compaction_in_a_turn_is_announced_with_claude_codes_frames(
    harness: Harness,
) -> None:
    """Claude Code's shape (the fixture's, from its /compact capture) for a compaction Nerve
    starts by itself between two prompts of one session: status frames, the boundary with
    trigger auto, the summary, then the turn goes on."""
    from agent_cli.loop.compaction_prompt import SUMMARY_MARKER

    def line(prompt: str) -> str:
        message = {"role": "user", "content": prompt}
        return json.dumps({"type": "user", "message": message, "parent_tool_use_id": None})

    summary = Turn(
        [text("<summary>The user said first.</summary>")],
        match=Match(predicate=lambda b: SUMMARY_MARKER in json.dumps(b["messages"])),
    )
    scenario = Scenario.of(Turn([text("big")], input_tokens=170_000), summary, [text("after")])
    args = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
    run = harness.run(args, scenario, input=line("first") + "\n" + line("second") + "\n")
    assert run.rc == 0, run.stderr
    frames = [json.loads(x) for x in run.stdout.splitlines()]
    second = frames[[_kind(f) for f in frames].index("result/success") + 1 :]
    kinds = [_kind(f) for f in second]
    assert kinds[:6] == [  # the turn's init first: the compaction is part of the turn
        "system/init",
        "system/status",
        "system/status",
        "system/compact_boundary",
        "user",
        "assistant",
    ], kinds
    for frame in frames:
        assert missing_fields(_expected(_kind(frame)), frame) == [], frame
    boundary = second[3]["compact_metadata"]
    assert boundary["trigger"] == "auto" and boundary["pre_tokens"] > 170_000
    assert second[-1]["result"] == "after" and second[-1]["result_index"] == 1


def test_init_says_each_mcp_servers_status_in_claude_codes_words(harness: Harness) -> None:
    """An unapproved project server is "pending" (Claude Code's McpServerConnectionStatus has
    no "needs approval"); a --mcp-config one is "connected" once it has started."""
    import sys

    from tests.tools.mcp.conftest import SERVERS

    harness.env["NERVE_TRUST_ALL"] = "1"
    server = {"command": sys.executable, "args": [str(SERVERS / "demo_server.py"), "tok"]}
    config = harness.project / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": server}}))
    args = ["-p", "hi", "--output-format", "stream-json", "--verbose"]
    for extra, status in (([], "pending"), (["--mcp-config", str(config)], "connected")):
        run = harness.run([*args, *extra], Scenario.of(Turn([text("ok")])))
        assert run.rc == 0, run.stderr
        init = json.loads(run.stdout.splitlines()[0])
        assert init["mcp_servers"] == [{"name": "demo", "status": status}]
