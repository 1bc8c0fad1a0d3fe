"""``nerve -p --fallback-model``: after three overloaded answers (529) in a row the request goes
to the fallback model, for the rest of the session, and stderr says so (issue 17 item 3)."""

from __future__ import annotations

from agent_cli.testing import Match, Scenario, Turn, overloaded, text, tool_use
from tests.agent_cli.e2e.conftest import Harness

MAIN = ["--model", "claude-main-x"]
JSON_BYPASS = ["--output-format", "json", "--permission-mode", "bypassPermissions"]


def test_repeated_overload_moves_to_the_fallback_model(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "echo hi"}, id="t1")], faults=[overloaded(times=3)]),
        Turn([text("done on the fallback")], match=Match(tool_result_for="t1")),
    )
    run = harness.run(
        ["-p", "go", *MAIN, "--fallback-model", "claude-fallback-x", *JSON_BYPASS],
        scenario,
    )
    assert run.rc == 0, run.stderr
    models = [r.body["model"] for r in run.server.requests]
    # three overloaded answers, then the same request on the fallback; the next one stays there
    assert models == ["claude-main-x"] * 3 + ["claude-fallback-x"] * 2
    assert run.json()["result"] == "done on the fallback"
    assert (
        "claude-main-x is overloaded (3 overloaded answers in a row); switching to the fallback "
        "model claude-fallback-x" in run.stderr
    )


def test_without_a_fallback_overload_is_retried_on_the_same_model(harness: Harness) -> None:
    scenario = Scenario.of(Turn([text("ok")], faults=[overloaded(times=3)]))
    run = harness.run(["-p", "go", *MAIN], scenario)
    assert run.rc == 0, run.stderr
    assert [r.body["model"] for r in run.server.requests] == ["claude-main-x"] * 4
    assert "fallback" not in run.stderr


def test_two_overloads_do_not_switch(harness: Harness) -> None:
    scenario = Scenario.of(Turn([text("ok")], faults=[overloaded(times=2)]))
    run = harness.run(["-p", "go", *MAIN, "--fallback-model", "claude-fallback-x"], scenario)
    assert run.rc == 0, run.stderr
    assert [r.body["model"] for r in run.server.requests] == ["claude-main-x"] * 3


def test_the_fallback_cannot_be_the_main_model(harness: Harness) -> None:
    harness.env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    run = harness.run(["-p", "go", *MAIN, "--fallback-model", "claude-main-x"], None)
    assert run.rc == 1
    assert "--fallback-model claude-main-x is the main model" in run.stderr
