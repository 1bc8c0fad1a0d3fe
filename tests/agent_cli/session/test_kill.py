"""A real ``nerve -p`` killed with SIGKILL at different moments, then ``nerve -p --continue``.

After every kill the next request must hold everything that was complete, answer every
tool_use (an interrupted call gets an ``is_error`` "interrupted" result), and be valid: the
scripted server checks roles alternate and every tool_use is answered, and fails loudly if not.
"""

from __future__ import annotations

import subprocess
from typing import Any

from agent_cli.loop.messages import normalize_messages_for_api
from agent_cli.session.resume import repair_for_resume
from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use
from agent_cli.transcripts.transcript import TranscriptReader
from tests.agent_cli.e2e.conftest import Harness
from tests.agent_cli.session.conftest import (
    group_alive,
    kill_group,
    main_transcripts,
    records,
    wait_for,
)

BYPASS = ["--permission-mode", "bypassPermissions"]
SLEEPER = "echo $$ > started.txt; sleep 30.731"  # a distinctive duration


def _results(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        b["tool_use_id"]: b
        for b in message["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }


def _kill_when(
    harness: Harness,
    killer: list[subprocess.Popen[str]],
    scenario: Scenario,
    ready: Any,
    prompt: str = "first prompt",
) -> ScriptedServer:
    """Start ``nerve -p``, wait for ``ready(server)``, SIGKILL it; the server is stopped."""
    server = harness.server(scenario)
    proc = harness.popen(["-p", prompt, *BYPASS], server)
    killer.append(proc)
    try:
        wait_for(lambda: ready(server) or proc.poll() is not None, what="the moment to kill")
        assert proc.poll() is None, (
            f"nerve ended before the kill: {proc.stderr and proc.stderr.read()}"
        )
        proc.kill()
        proc.wait(timeout=10)
    finally:
        server.stop()
    return server


def _continue(harness: Harness, turns: list[Turn]) -> Any:
    run = harness.run(
        ["-p", "go on", "--continue", "--output-format", "json", *BYPASS], Scenario.of(*turns)
    )
    assert run.rc == 0, run.stderr
    return run


def test_kill_mid_tool_call_then_continue(harness: Harness, killer: list) -> None:
    started = harness.project / "started.txt"
    first = Scenario.of(
        Turn([text("Running it."), tool_use("Bash", {"command": SLEEPER}, id="t_sleep")])
    )
    try:
        _kill_when(
            harness, killer, first, lambda s: started.exists() and started.read_text().strip()
        )
        pgid = int(started.read_text())
        # Nothing in a SIGKILLed process can react: the tool's group (its own session) lives on.
        assert group_alive(pgid), "expected the bash child to outlive a SIGKILLed nerve"
        [path] = main_transcripts(harness)
        session_id = path.stem

        run = _continue(
            harness, [Turn([text("Picking up again.")], match=Match(tool_result_for="t_sleep"))]
        )
        # The next start's reaper (tools/process/reaper.py) ended the dead nerve's group.
        wait_for(lambda: not group_alive(pgid), timeout=5, what="the reaper to end the orphan")
    finally:
        kill_group(started)  # safety net only
    assert run.json()["result"] == "Picking up again."
    assert run.json()["session_id"] == session_id  # resume appends to the same session
    messages = run.server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"][0]["text"] == "first prompt"
    [call] = [b for b in messages[1]["content"] if b["type"] == "tool_use"]
    assert call["id"] == "t_sleep" and call["input"] == {"command": SLEEPER}
    result = _results(messages[2])["t_sleep"]
    assert result["is_error"] is True and "interrupted" in result["content"]
    assert messages[2]["content"][-1] == {"type": "text", "text": "go on"}
    # One file, now holding the repair and the new turn; a second resume sees the same story.
    assert main_transcripts(harness) == [path]
    kinds = [(r["type"], r.get("interrupted")) for r in records(path)]
    assert ("user", True) in kinds
    # A second resume reads the same story from the file and has nothing left to repair.
    size = path.stat().st_size
    again = normalize_messages_for_api(repair_for_resume(TranscriptReader.load(path), None))
    assert again[:2] == messages[:2] and _results(again[2])["t_sleep"] == result
    assert path.stat().st_size == size


def test_kill_while_text_streams(harness: Harness, killer: list) -> None:
    first = Scenario.of(
        Turn([text("A long thought that"), text("never finishes")], holds={0: "hold"})
    )
    _kill_when(harness, killer, first, lambda s: "#1 content_block_stop[0]" in s.marks)
    run = _continue(harness, [Turn([text("Back.")], match=Match(contains_text="go on"))])
    messages = run.server.requests[0].body["messages"]
    # The unfinished assistant message was never recorded (the record being written is lost);
    # both prompts survive, as one user message.
    assert messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first prompt"},
                {"type": "text", "text": "go on"},
            ],
        }
    ]
    assert run.json()["result"] == "Back."


def test_kill_between_tools_of_a_batch_keeps_the_finished_result(
    harness: Harness, killer: list
) -> None:
    started = harness.project / "started.txt"
    first = Scenario.of(
        Turn(
            [
                tool_use("Bash", {"command": "echo first-done > a.txt; cat a.txt"}, id="t_a"),
                tool_use("Bash", {"command": SLEEPER}, id="t_b"),
            ]
        )
    )
    try:
        _kill_when(
            harness, killer, first, lambda s: started.exists() and started.read_text().strip()
        )
    finally:
        kill_group(started)
    run = _continue(harness, [Turn([text("Ok.")], match=Match(tool_result_for="t_b"))])
    messages = run.server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    results = _results(messages[2])
    assert list(results) == ["t_a", "t_b"]  # call order kept
    assert results["t_a"].get("is_error") is not True
    assert "first-done" in str(results["t_a"]["content"])
    assert results["t_b"]["is_error"] is True and "interrupted" in results["t_b"]["content"]


def test_kill_while_waiting_for_the_next_answer(harness: Harness, killer: list) -> None:
    first = Scenario.of(
        Turn([tool_use("Bash", {"command": "echo hello"}, id="t_1")]),
        Turn(
            [text("Thinking about"), text("the output")],
            holds={0: "hold"},
            match=Match(tool_result_for="t_1"),
        ),
    )
    _kill_when(harness, killer, first, lambda s: "#2 content_block_stop[0]" in s.marks)
    run = _continue(harness, [Turn([text("Done.")], match=Match(tool_result_for="t_1"))])
    messages = run.server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    result = _results(messages[2])["t_1"]
    assert result.get("is_error") is not True and "hello" in str(result["content"])
    assert messages[2]["content"][-1]["text"] == "go on"


async def test_kill_leaves_the_background_task_listed_as_detached(
    harness: Harness, killer: list, monkeypatch: Any
) -> None:
    from agent_cli.options import RunOptions
    from agent_cli.session.agent_session import AgentSession

    pid_file = harness.project / "bg.txt"
    first = Scenario.of(
        Turn(
            [
                tool_use(
                    "Bash",
                    {"command": "echo $$ > bg.txt; sleep 30.732", "run_in_background": True},
                    id="t_bg",
                )
            ]
        ),
        Turn([text("Waiting on it")], holds={0: "hold"}, match=Match(tool_result_for="t_bg")),
    )
    try:
        _kill_when(
            harness,
            killer,
            first,
            lambda s: "#2 content_block_stop[0]" in s.marks and pid_file.exists(),
        )
        [path] = main_transcripts(harness)
        tasks = [r for r in records(path) if r["type"] == "background-tasks"]
        assert tasks and tasks[-1]["tasks"][0]["status"] == "running"
        for key, value in harness.env_for(None).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        pgid = int(pid_file.read_text())
        assert group_alive(pgid), "expected the task to outlive a SIGKILLed nerve"
        session = AgentSession.create(RunOptions(continue_session=True), cwd=harness.project)
        [view] = session.background_tasks()
        assert view.status == "detached" and view.command.startswith("echo $$ > bg.txt")
        # Starting the session also reaped the dead nerve's background task.
        wait_for(lambda: not group_alive(pgid), timeout=5, what="the reaper to end the task")
        await session.close()
    finally:
        kill_group(pid_file)
