"""Context windows by model family."""

from __future__ import annotations

from agent_cli.model.windows import DEFAULT_CONTEXT_WINDOW, context_window


def test_known_families_unknown_ids_and_the_1m_suffix() -> None:
    assert context_window("claude-sonnet-4-5-20250929", {}) == 200_000
    assert context_window("claude-opus-4-1", {}) == 200_000
    assert context_window("claude-3-5-haiku-latest", {}) == 200_000
    assert context_window("some-gateway-model", {}) == DEFAULT_CONTEXT_WINDOW
    assert context_window("claude-sonnet-4-5[1m]", {}) == 1_000_000


def test_the_window_variable_wins_and_bad_values_are_ignored() -> None:
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "128000"}
    assert context_window("claude-sonnet-4-5", env) == 128_000
    assert context_window("x", {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "lots"}) == 200_000
    assert context_window("x", {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "0"}) == 200_000
