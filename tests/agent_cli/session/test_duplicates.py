"""A model that reuses a tool_use id, and a transcript with repeated lines: the API (the scripted
server checks what the real one rejects) never sees a repeated id, live or after ``--continue``."""

from __future__ import annotations

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness
from tests.agent_cli.session.conftest import main_transcripts

BYPASS = ["--permission-mode", "bypassPermissions"]


def test_a_reused_tool_use_id_is_renamed_live_and_on_resume(harness: Harness) -> None:
    first = harness.run(
        ["-p", "go", "--output-format", "json", *BYPASS],
        Scenario.of(
            Turn([tool_use("Bash", {"command": "echo one"}, id="dup")]),
            Turn(
                [tool_use("Bash", {"command": "echo two"}, id="dup")],
                match=Match(tool_result_for="dup"),
            ),
            Turn([text("Done.")], match=Match(tool_result_for="dup_r2")),
        ),
    )
    assert first.rc == 0, first.stderr
    last = first.server.requests[-1].body["messages"]
    assert [b["id"] for m in last if m["role"] == "assistant" for b in m["content"]] == [
        "dup",
        "dup_r2",
    ]
    assert "two" in str(last[-1]["content"][0]["content"])

    # The transcript keeps what the model sent; a line copied twice on top of it.
    [path] = main_transcripts(harness)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines + lines[1:4]))
    again = harness.run(
        ["-p", "and now?", "--continue", "--output-format", "json", *BYPASS],
        Scenario.of(Turn([text("Still fine.")], match=Match(contains_text="and now?"))),
    )
    assert again.rc == 0, again.stderr
    assert again.json()["result"] == "Still fine."
    resumed = again.server.requests[0].body["messages"]
    assert resumed[: len(last)] == last
