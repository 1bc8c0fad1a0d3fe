"""Thinking and effort per model (issue 17 item 4): ``alwaysThinkingEnabled`` turns thinking on,
adaptive where the model has it and a budget otherwise; ``MAX_THINKING_TOKENS`` asks for a budget
(adaptive-only models still get adaptive); ``CLAUDE_CODE_EFFORT_LEVEL`` / ``effortLevel`` go out
as ``output_config.effort`` to the models that have effort."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, thinking, tool_use
from tests.agent_cli.e2e.conftest import Harness


def _user_settings(harness: Harness, data: dict[str, Any]) -> None:
    path = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _one(harness: Harness, *flags: str) -> dict[str, Any]:
    run = harness.run(["-p", "hi", *flags], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    return run.server.requests[0].body


def test_always_thinking_is_adaptive_on_a_model_that_has_it(harness: Harness) -> None:
    _user_settings(harness, {"alwaysThinkingEnabled": True})
    scenario = Scenario.of(
        Turn(
            [
                thinking("run it", signature="sig-adaptive=="),
                tool_use("Bash", {"command": "echo 1"}, id="t1"),
            ]
        ),
        Turn([text("1")], match=Match(tool_result_for="t1")),
    )
    run = harness.run(
        ["-p", "go", "--model", "claude-sonnet-4-6", "--permission-mode", "bypassPermissions"],
        scenario,
    )
    assert run.rc == 0, run.stderr
    for request in run.server.requests:  # the server also checks the block came back intact
        assert request.body["thinking"] == {"type": "adaptive"}
        assert request.body["max_tokens"] == 16_000


def test_always_thinking_is_a_budget_on_an_older_model(harness: Harness) -> None:
    _user_settings(harness, {"alwaysThinkingEnabled": True})
    body = _one(harness, "--model", "claude-sonnet-4-5")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 31_999}
    assert body["max_tokens"] >= 31_999 + 4096


def test_a_budget_on_an_adaptive_only_model_is_sent_as_adaptive(harness: Harness) -> None:
    harness.env["MAX_THINKING_TOKENS"] = "4096"
    assert _one(harness, "--model", "claude-opus-4-7")["thinking"] == {"type": "adaptive"}
    # on a model that takes both, the budget asked for is what goes out
    body = _one(harness, "--model", "claude-sonnet-4-6")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}


def test_thinking_stays_off_when_false(harness: Harness) -> None:
    _user_settings(harness, {"alwaysThinkingEnabled": False})
    assert "thinking" not in _one(harness)


@pytest.mark.parametrize(
    ("env", "setting", "model", "expected"),
    [
        ("low", None, "claude-sonnet-4-6", {"effort": "low"}),
        ("high", "medium", "claude-opus-4-7", {"effort": "high"}),  # the variable wins
        (None, "max", "claude-opus-4-6", {"effort": "max"}),
        ("low", None, "claude-haiku-4-5", None),  # no effort on this model: not sent
    ],
)
def test_effort_goes_to_the_models_that_have_it(
    harness: Harness, env: str | None, setting: str | None, model: str, expected: Any
) -> None:
    if env is not None:
        harness.env["CLAUDE_CODE_EFFORT_LEVEL"] = env
    if setting is not None:
        _user_settings(harness, {"effortLevel": setting})
    body = _one(harness, "--model", model)
    assert body.get("output_config") == expected
    assert "thinking" not in body  # effort alone does not turn thinking on


def test_an_unknown_effort_is_a_warning(harness: Harness) -> None:
    harness.env["CLAUDE_CODE_EFFORT_LEVEL"] = "turbo"
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert "CLAUDE_CODE_EFFORT_LEVEL='turbo' ignored" in run.stderr
    assert "output_config" not in run.server.requests[0].body
