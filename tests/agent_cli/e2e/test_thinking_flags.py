"""``--thinking``, ``--max-thinking-tokens`` and ``--effort`` (what the Agent SDKs pass for their
thinking and effort options): what reaches the server, over the configured thinking."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.model.thinking import EFFORT_LEVELS
from agent_cli.options import EFFORT_LEVELS as FLAG_EFFORT_LEVELS
from agent_cli.testing import Scenario, Turn, text
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]


def _body(harness: Harness, *flags: str) -> dict[str, Any]:
    run = harness.run(
        ["-p", "hi", "--model", "claude-sonnet-4-6", *flags], Scenario.of(Turn([text("ok")]))
    )
    assert run.rc == 0, run.stderr
    return run.server.requests[0].body


def test_the_flags_effort_levels_are_the_models() -> None:
    assert FLAG_EFFORT_LEVELS == EFFORT_LEVELS


def test_adaptive_thinking_and_an_effort_level(harness: Harness) -> None:
    body = _body(harness, "--thinking", "adaptive", "--effort", "low")
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "low"}


def test_a_budget_turns_thinking_on_with_it(harness: Harness) -> None:
    body = _body(harness, "--max-thinking-tokens", "2048")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048 and "output_config" not in body


@pytest.mark.parametrize("flags", [("--thinking", "disabled"), ("--max-thinking-tokens", "0")])
def test_thinking_off_wins_over_the_setting(harness: Harness, flags: tuple[str, str]) -> None:
    harness.env["MAX_THINKING_TOKENS"] = "4096"
    assert "thinking" in _body(harness)  # the configured thinking, without the flag
    assert "thinking" not in _body(harness, *flags)


def test_without_the_flags_nothing_is_added(harness: Harness) -> None:
    body = _body(harness)
    assert "thinking" not in body and "output_config" not in body


def test_a_bad_effort_is_refused(harness: Harness) -> None:
    run = harness.run(["-p", "hi", "--effort", "extreme"], None)
    assert run.rc != 0 and "--effort" in run.stderr
