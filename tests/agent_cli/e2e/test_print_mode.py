"""``nerve -p`` end to end: real process, real SDK, scripted server over loopback."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.testing import (
    Match,
    Scenario,
    Turn,
    cut,
    overloaded,
    rate_limit,
    server_error,
    stream_error,
    text,
    tool_use,
)
from tests.agent_cli.e2e.conftest import Harness


def _tool_results(body: dict) -> dict[str, dict]:
    last = body["messages"][-1]
    return {b["tool_use_id"]: b for b in last["content"] if b.get("type") == "tool_result"}


def test_multi_tool_task_reads_greps_edits_and_runs(harness: Harness) -> None:
    src = harness.project / "calc.py"
    src.write_text("def add(a, b):\n    return a - b\n")
    f = str(src)
    scenario = Scenario.of(
        Turn(
            [
                text("Looking."),
                tool_use("Read", {"file_path": f}, id="t_read"),
                tool_use("Grep", {"pattern": "return", "output_mode": "content"}, id="t_grep"),
            ]
        ),
        Turn(
            [
                tool_use(
                    "Edit",
                    {"file_path": f, "old_string": "a - b", "new_string": "a + b"},
                    id="t_edit",
                )
            ],
            match=Match(tool_result_for="t_grep"),
        ),
        Turn(
            [
                tool_use(
                    "Bash",
                    {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"},
                    id="t_run",
                )
            ],
            match=Match(tool_result_for="t_edit"),
        ),
        Turn([text("Fixed: add now returns 5 for 2 + 3.")], match=Match(tool_result_for="t_run")),
    )
    run = harness.run(
        [
            "-p",
            "fix add",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash(python3 *)",
        ],
        scenario,
    )
    assert run.rc == 0, run.stderr
    out = run.json()
    assert out["result"] == "Fixed: add now returns 5 for 2 + 3."
    assert out["num_turns"] == 4 and out["is_error"] is False
    assert src.read_text() == "def add(a, b):\n    return a + b\n"
    bodies = [r.body for r in run.server.requests]
    read_grep = _tool_results(bodies[1])
    assert "return a - b" in read_grep["t_read"]["content"]
    assert "calc.py" in read_grep["t_grep"]["content"]
    assert _tool_results(bodies[3])["t_run"]["content"].strip() == "5"


def _counting_scenario(marker: Path, fault_turn: int, fault: object) -> Scenario:
    cmd = f"echo ran >> {marker}"
    first = Turn([text("Working on it."), tool_use("Bash", {"command": cmd}, id="t_once")])
    second = Turn([text("All done.")], match=Match(tool_result_for="t_once"))
    turns = [first, second]
    turns[fault_turn].faults.append(fault)  # type: ignore[arg-type]
    return Scenario.of(*turns)


def test_every_fault_kind_is_survived_without_running_a_tool_twice(harness: Harness) -> None:
    faults = {
        "429": rate_limit("0"),
        "529": overloaded(),
        "500": server_error(),
        "stream-overloaded": stream_error(after_events=2),
        "cut-before-tools": cut(after_events=2),
    }
    for name, fault in faults.items():
        for turn_index in (0, 1):
            marker = harness.project / f"ran-{name}-{turn_index}.txt"
            run = harness.run(
                ["-p", "go", "--output-format", "json", "--permission-mode", "acceptEdits"],
                _counting_scenario(marker, turn_index, fault),
            )
            assert run.rc == 0, (name, turn_index, run.stderr)
            assert run.json()["result"] == "All done.", (name, run.stdout)
            assert marker.read_text() == "ran\n", (name, turn_index)


def test_cut_after_a_tool_was_handed_out_keeps_the_tool_and_continues(harness: Harness) -> None:
    marker = harness.project / "r.txt"
    # 8 events carry the whole tool_use block (start, 5 JSON chunks, stop); the cut comes after
    # it closed, in the middle of the text that follows.
    scenario = Scenario.of(
        Turn(
            [
                tool_use("Bash", {"command": "echo ran >> r.txt"}, id="t_a"),
                text("and now a long explanation that never arrives"),
            ],
            faults=[cut(after_events=11, consumes_turn=True)],
        ),
        Turn([text("Finished.")], match=Match(tool_result_for="t_a")),
    )
    run = harness.run(
        ["-p", "go", "--output-format", "json", "--permission-mode", "acceptEdits"], scenario
    )
    assert run.rc == 0, run.stderr
    assert marker.read_text() == "ran\n"
    assert run.json()["result"] == "Finished."
    assert len(run.server.requests) == 2


def test_max_turns_stops_and_reports(harness: Harness) -> None:
    scenario = Scenario.of(Turn([tool_use("Glob", {"pattern": "*"}, id="g1")]))
    run = harness.run(["-p", "loop", "--max-turns", "1", "--output-format", "json"], scenario)
    out = run.json()
    assert run.rc == 1
    assert out["subtype"] == "error_max_turns" and out["num_turns"] == 1 and out["is_error"]


def test_denials_reported_in_json_and_told_to_the_model(harness: Harness) -> None:
    victim = harness.project / "keep.txt"
    victim.write_text("precious")
    scenario = Scenario.of(
        Turn(
            [
                tool_use("Bash", {"command": f"rm -f {victim}"}, id="t_rm"),
                tool_use("Bash", {"command": "touch new.txt"}, id="t_touch"),
            ]
        ),
        Turn([text("I could not do it.")], match=Match(tool_result_for="t_touch")),
    )
    run = harness.run(
        ["-p", "clean up", "--output-format", "json", "--disallowedTools", "Bash(rm *)"], scenario
    )
    assert run.rc == 0, run.stderr
    assert victim.read_text() == "precious"
    assert not (harness.project / "new.txt").exists()
    out = run.json()
    denied = {d["tool_use_id"]: d for d in out["permission_denials"]}
    assert set(denied) == {"t_rm", "t_touch"}
    results = _tool_results(run.server.requests[1].body)
    assert results["t_rm"]["is_error"] and "Bash(rm *)" in results["t_rm"]["content"]
    assert "non-interactively" in results["t_touch"]["content"]


def test_dont_ask_and_bypass_follow_their_definitions(harness: Harness) -> None:
    for mode, should_run in (("dontAsk", False), ("bypassPermissions", True)):
        target = harness.project / f"made-by-{mode}.txt"
        scenario = Scenario.of(
            Turn([tool_use("Bash", {"command": f"touch {target}"}, id="t1")]),
            Turn([text("ok")], match=Match(tool_result_for="t1")),
        )
        run = harness.run(
            ["-p", "x", "--permission-mode", mode, "--output-format", "json"], scenario
        )
        assert run.rc == 0, run.stderr
        assert target.exists() is should_run, mode
        assert bool(run.json()["permission_denials"]) is (not should_run)


def test_memory_files_reach_the_system_prompt(harness: Harness) -> None:
    (harness.project / "AGENTS.md").write_text("Always answer in haiku.")
    (harness.project / "CLAUDE.local.md").write_text("My name is Ada.")
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("hello")])))
    assert run.rc == 0 and run.stdout.strip() == "hello"
    system = json.dumps(run.server.requests[0].body["system"])
    assert "Always answer in haiku." in system and "My name is Ada." in system


def test_prompt_from_stdin_and_stream_json(harness: Harness) -> None:
    run = harness.run(
        ["-p", "--output-format", "stream-json"],
        Scenario.of(Turn([text("streamed answer")])),
        input="question",
    )
    assert run.rc == 0, run.stderr
    lines = [json.loads(x) for x in run.stdout.splitlines()]
    assert [x["type"] for x in lines] == ["system", "assistant", "result"]
    assert lines[1]["message"]["content"] == [{"type": "text", "text": "streamed answer"}]
    assert lines[2]["result"] == "streamed answer"
    first_user = run.server.requests[0].body["messages"][0]
    assert "question" in json.dumps(first_user)


def test_no_api_key_gives_a_useful_message(harness: Harness) -> None:
    run = harness.run(["-p", "hi"], None)
    assert run.rc == 1
    assert "ANTHROPIC_API_KEY" in run.stderr and "nerve demo" in run.stderr


def test_api_error_exits_non_zero_with_clean_message(harness: Harness) -> None:
    from agent_cli.testing import http_error

    scenario = Scenario.of(
        Turn([text("never")], faults=[http_error(401, "authentication_error", "bad key")])
    )
    run = harness.run(["-p", "hi"], scenario, check_done=False)
    assert run.rc == 1
    assert "401" in run.stderr and "bad key" in run.stderr
    assert "Traceback" not in run.stderr
