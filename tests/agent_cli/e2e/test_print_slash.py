"""``nerve -p "/command"``: registered slash commands run in print mode without a model call."""

from __future__ import annotations

from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness


def test_help_needs_no_session_or_key(harness: Harness) -> None:
    run = harness.run(["-p", "/help"], None)
    assert run.rc == 0, run.stderr
    assert "/cost" in run.stdout and "/clear" not in run.stdout


def test_a_session_command_runs_without_asking_the_model(harness: Harness) -> None:
    run = harness.run(["-p", "/tools", "--output-format", "json"], Scenario.of())
    assert run.rc == 0, run.stderr
    result = run.json()
    assert result["is_error"] is False and result["num_turns"] == 0
    assert "Read" in result["result"] and "Bash" in result["result"]
    assert run.server.requests == []


def test_a_screen_only_command_is_a_clear_error(harness: Harness) -> None:
    run = harness.run(["-p", "/clear"], Scenario.of())
    assert run.rc == 1
    assert "/clear works only in the interactive app" in run.stderr
    assert run.stdout == ""


def test_an_unregistered_slash_word_is_a_prompt_for_the_model(harness: Harness) -> None:
    run = harness.run(["-p", "/usr/bin/python3 crashes, why?"], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "ok"
    first = run.server.requests[0].body["messages"][0]
    assert "/usr/bin/python3 crashes" in str(first["content"])
