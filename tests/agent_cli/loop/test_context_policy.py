"""The threshold, the settings that move it, the meter, and clearing old tool results."""

from __future__ import annotations

import pytest

from agent_cli.loop.context_meter import IMAGE_TOKENS, ContextMeter, estimate_tokens
from agent_cli.loop.context_policy import ContextPolicy, clear_old_tool_results, cleared_stub
from agent_cli.model.usage import Usage


def test_threshold_is_80_percent_and_leaves_room_for_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", raising=False)
    policy, warnings = ContextPolicy.from_settings({})
    assert warnings == [] and policy.auto
    assert policy.threshold("claude-sonnet-4-5") == 160_000
    high = ContextPolicy(pct=99)
    assert high.threshold("claude-sonnet-4-5") == 200_000 - 16_000  # the answer must fit


def test_percentage_and_window_from_the_session_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "25")
    monkeypatch.delenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", raising=False)
    policy, _ = ContextPolicy.from_settings({})  # no session environment: this process's
    assert policy.threshold("claude-sonnet-4-5") == 50_000
    # The session environment is the whole environment: the process's values are not mixed in.
    environ = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}
    policy, _ = ContextPolicy.from_settings({}, environ)
    assert policy.threshold("claude-sonnet-4-5") == 50_000
    policy, _ = ContextPolicy.from_settings({}, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"})
    assert policy.threshold("claude-sonnet-4-5") == 100_000
    for bad in ("0", "101", "half"):
        monkeypatch.setenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", bad)
        policy, warnings = ContextPolicy.from_settings({})
        assert policy.pct == 80 and "not a percentage" in warnings[0]


def test_auto_compact_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", raising=False)
    assert not ContextPolicy.from_settings({"autoCompact": False})[0].auto
    assert not ContextPolicy.from_settings({"autoCompactEnabled": False})[0].auto
    policy, warnings = ContextPolicy.from_settings({"autoCompact": "no"})
    assert policy.auto and "expected true or false" in warnings[0]


def test_estimates_and_the_meter() -> None:
    assert estimate_tokens("abcd" * 10) == 10
    image = {"type": "image", "source": {"type": "base64", "data": "A" * 1_000_000}}
    assert estimate_tokens(image) == IMAGE_TOKENS
    schema = {"name": "T", "input_schema": {"properties": {"type": {"type": "string"}}}}
    assert estimate_tokens(schema) > 0  # a "type" key that is not a block type is fine
    meter = ContextMeter()
    messages = [{"role": "user", "content": "x" * 400}]
    assert not meter.measured and meter.tokens("", [], messages) >= 100
    meter.observe(Usage(input=1000, cache_read=500, output=100), len(messages))
    assert meter.measured and meter.tokens("", [], messages) == 1600
    messages.append({"role": "user", "content": "y" * 400})
    assert meter.tokens("", [], messages) == 1600 + estimate_tokens(messages[1])
    meter.discount(600)
    assert meter.tokens("", [], messages[:1]) == 1000
    meter.observe(Usage(), 2)  # an empty response says nothing: the count stands
    assert meter.tokens("", [], messages[:1]) == 1000
    meter.reset()
    assert not meter.measured


def _conversation(n: int, size: int) -> list[dict]:
    messages: list[dict] = []
    for i in range(n):
        messages.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Grep"}]}
        )
        block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "z" * size}
        messages.append({"role": "user", "content": [block]})
    return messages


def test_clearing_keeps_the_newest_results_names_the_tool_and_is_sticky() -> None:
    messages = _conversation(8, 4000)
    replaced: dict[str, str] = {}
    count, freed = clear_old_tool_results(messages, 5, replaced)
    assert count == 3 and freed > 2500
    contents = [m["content"][0]["content"] for m in messages if m["role"] == "user"]
    assert contents[:3] == [cleared_stub("Grep")] * 3 and "Grep" in contents[0]
    assert all(c == "z" * 4000 for c in contents[3:])
    assert set(replaced) == {"t0", "t1", "t2"}
    assert clear_old_tool_results(messages, 5, replaced) == (0, 0)  # already cleared


def test_small_results_are_not_worth_clearing() -> None:
    messages = _conversation(8, 40)
    assert clear_old_tool_results(messages, 1) == (0, 0)
