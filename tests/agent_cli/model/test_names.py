"""Model names (issue 16.4): precedence, alias remaps, the fast and sub-agent models, proxies."""

from __future__ import annotations

import pytest

from agent_cli.model.config import ModelConfig
from agent_cli.model.names import (
    DEFAULT_MODEL,
    MODEL_ALIASES,
    expand_alias,
    resolve_model,
    small_fast_model,
    subagent_model,
)
from agent_cli.model.proxy import proxy_for
from agent_cli.model.usage import price_for


def test_precedence_flag_then_env_then_settings_then_default() -> None:
    env = {"ANTHROPIC_MODEL": "env-model-x"}
    assert resolve_model("claude-x", "opus", env) == "claude-x"
    assert resolve_model(None, "opus", env) == "env-model-x"
    assert resolve_model(None, "opus", {}) == MODEL_ALIASES["opus"]
    assert resolve_model(None, None, {}) == DEFAULT_MODEL == MODEL_ALIASES["sonnet"]
    assert resolve_model("  ", " ", {"ANTHROPIC_MODEL": " "}) == DEFAULT_MODEL


def test_alias_table_is_current_and_priced() -> None:
    assert MODEL_ALIASES == {
        "opus": "claude-opus-4-7",
        "sonnet": "claude-sonnet-4-6",
        "haiku": "claude-haiku-4-5",
    }
    assert all(price_for(model) is not None for model in MODEL_ALIASES.values())
    assert expand_alias("best", {}) == MODEL_ALIASES["opus"]
    assert expand_alias("DEFAULT", {}) == DEFAULT_MODEL
    assert expand_alias("opusplan", {}) == MODEL_ALIASES["sonnet"]
    assert expand_alias("sonnet[1m]", {}) == MODEL_ALIASES["sonnet"]
    assert expand_alias("claude-opus-4-7[1M]", {}) == "claude-opus-4-7"
    assert expand_alias("glm-4.7", {}) == "glm-4.7"


def test_default_model_variables_remap_the_aliases() -> None:
    env = {
        "ANTHROPIC_DEFAULT_OPUS_MODEL": "glm-5-opus-alias",
        "ANTHROPIC_DEFAULT_SONNET_MODEL": "glm-sonnet",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-air",
    }
    assert resolve_model(None, "opus", env) == "glm-5-opus-alias"
    assert resolve_model(None, None, env) == "glm-sonnet"  # the default is the sonnet alias
    assert resolve_model(None, None, {**env, "ANTHROPIC_MODEL": "best"}) == "glm-5-opus-alias"
    assert expand_alias("haiku", env) == "glm-air"
    assert expand_alias("haiku", {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "  "}) == MODEL_ALIASES["haiku"]


def test_small_fast_model() -> None:
    assert small_fast_model({}) == MODEL_ALIASES["haiku"]
    assert small_fast_model({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "h"}) == "h"
    both = {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "h", "ANTHROPIC_SMALL_FAST_MODEL": "fast-x"}
    assert small_fast_model(both) == "fast-x"
    assert small_fast_model({"ANTHROPIC_SMALL_FAST_MODEL": "opus"}) == MODEL_ALIASES["opus"]


@pytest.mark.parametrize(
    ("requested", "defined", "env", "expected"),
    [
        (None, None, {}, "parent-m"),
        (None, "inherit", {}, "parent-m"),
        (None, "haiku", {}, MODEL_ALIASES["haiku"]),
        ("opus", "haiku", {}, MODEL_ALIASES["opus"]),
        ("opus", "haiku", {"CLAUDE_CODE_SUBAGENT_MODEL": "sub-model-x"}, "sub-model-x"),
        (None, "haiku", {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "glm-air"}, "glm-air"),
        (None, None, {"CLAUDE_CODE_SUBAGENT_MODEL": "sonnet"}, MODEL_ALIASES["sonnet"]),
    ],
)
def test_subagent_model(
    requested: str | None, defined: str | None, env: dict[str, str], expected: str
) -> None:
    assert subagent_model(requested, defined, "parent-m", env) == expected


def test_proxy_comes_from_the_given_environment() -> None:
    env = {"HTTPS_PROXY": "http://up:1", "https_proxy": "http://low:2", "NO_PROXY": ".corp"}
    assert proxy_for(None, env) == "http://low:2"  # the first-party API is https
    assert proxy_for("https://llm.corp", env) is None
    assert proxy_for("https://x.llm.corp:8443", env) is None
    assert proxy_for("http://127.0.0.1:9", env) is None  # no HTTP_PROXY
    plain = {"HTTP_PROXY": "http://p:3", "NO_PROXY": "127.0.0.1:9000"}
    assert proxy_for("http://127.0.0.1:9000", plain) is None
    assert proxy_for("http://127.0.0.1:9001", plain) == "http://p:3"
    assert proxy_for("http://h", {"ALL_PROXY": "socks5://s", "no_proxy": "*"}) is None
    assert proxy_for("http://h", {}) is None


def test_model_config_takes_key_url_model_and_proxy_from_the_mapping() -> None:
    env = {
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "ANTHROPIC_MODEL": "glm-4.7",
        "HTTP_PROXY": "http://127.0.0.1:8",
    }
    cfg = ModelConfig.resolve(env=env, settings_model="opus")
    assert (cfg.api_key, cfg.base_url, cfg.model, cfg.proxy) == (
        "k",
        "http://127.0.0.1:9",
        "glm-4.7",
        "http://127.0.0.1:8",
    )
    assert "127.0.0.1:8" not in repr(cfg)  # a proxy URL may carry credentials
