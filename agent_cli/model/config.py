"""Which model, where, with which key: resolution from flags, settings and the environment.

Light on purpose (no SDK import) so the CLI can resolve and report a missing key cheaply.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

from agent_cli.model.endpoint import (
    DEFAULT_STREAM_IDLE_TIMEOUT_S,
    CloudConfig,
    KeyHelperConfig,
    cloud_config,
    custom_headers,
    key_helper_config,
    max_retries,
    provider,
    stream_idle_timeout,
)
from agent_cli.model.names import DEFAULT_MODEL, MODEL_ALIASES, resolve_model
from agent_cli.model.proxy import proxy_for
from agent_cli.model.retry import DEFAULT_MAX_RETRIES
from agent_cli.model.thinking import budget_of
from tools.records import datarecord

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "DEFAULT_TIMEOUT",
    "MODEL_ALIASES",
    "MissingApiKey",
    "ModelConfig",
    "resolve_model",
]

DEFAULT_MAX_TOKENS = 16_000
DEFAULT_TIMEOUT = 600.0


class MissingApiKey(Exception):
    """No credentials and no custom endpoint: the message tells the user how to fix it."""

    def __init__(self) -> None:
        super().__init__(
            "No API key found. Set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...), "
            "ANTHROPIC_AUTH_TOKEN or an apiKeyHelper in settings, or set ANTHROPIC_BASE_URL to "
            "use a compatible endpoint (CLAUDE_CODE_USE_BEDROCK / CLAUDE_CODE_USE_VERTEX for "
            "the cloud providers). "
            "To look around without a key, try `nerve demo` for an offline tour."
        )


@datarecord(frozen=True, slots=True)
class ModelConfig:
    """Everything the client needs to reach the model.

    ``api_key`` goes out as ``x-api-key``, ``auth_token`` as ``Authorization: Bearer``; with
    neither, ``key_helper``'s output is sent as both (as Claude Code does). ``cloud`` set: the
    request goes to Bedrock or Vertex through the SDK, never to the first-party API.
    """

    api_key: str | None = None
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float = DEFAULT_TIMEOUT
    auth_token: str | None = None
    key_helper: KeyHelperConfig | None = None
    headers: tuple[tuple[str, str], ...] = ()  # ANTHROPIC_CUSTOM_HEADERS
    betas: tuple[str, ...] = ()  # anthropic-beta
    cloud: CloudConfig | None = None
    idle_timeout: float = DEFAULT_STREAM_IDLE_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    # MAX_THINKING_TOKENS: extended thinking with this budget on the agent's own requests
    thinking_budget: int | None = None
    always_thinking: bool = False  # settings alwaysThinkingEnabled
    effort: str | None = None  # CLAUDE_CODE_EFFORT_LEVEL / effortLevel (agent_cli.model.thinking)
    # --fallback-model: where a request goes after repeated overload (529) of its model
    fallback_model: str | None = None

    @property
    def provider(self) -> str:
        return "anthropic" if self.cloud is None else self.cloud.provider

    # the proxy for base_url per the session environment; None: connect directly
    proxy: str | None = None

    def __repr__(self) -> str:  # never print the key
        return (
            f"ModelConfig(provider={self.provider!r}, model={self.model!r}, "
            f"base_url={self.base_url!r}, max_tokens={self.max_tokens}, timeout={self.timeout})"
        )

    @classmethod
    def resolve(
        cls,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        cli_model: str | None = None,
        settings_model: str | None = None,
        settings_base_url: str | None = None,
        env: Mapping[str, str] | None = None,
        api_key_helper: str | None = None,
    ) -> ModelConfig:
        """Resolve from explicit values (a flag, settings) and ``env`` (default ``os.environ``);
        ``max_tokens`` and ``timeout`` keep their defaults (``dataclasses.replace`` sets them).

        Provider: ``CLAUDE_CODE_USE_BEDROCK`` / ``_VERTEX`` (see ``agent_cli.model.endpoint``).
        Key: ``api_key`` > ``ANTHROPIC_API_KEY``; token: ``ANTHROPIC_AUTH_TOKEN``; the settings'
        ``api_key_helper`` only when neither is set. Base URL: ``base_url`` >
        ``ANTHROPIC_BASE_URL`` > settings. Raises MissingApiKey when the Anthropic API is asked
        without any credential or custom base URL, ModelConfigError for unusable values.
        Model: ``agent_cli.model.names.resolve_model`` (``--model`` > ``ANTHROPIC_MODEL`` >
        settings). Proxy: ``*_PROXY`` / ``NO_PROXY`` in ``env`` (``agent_cli.model.proxy``).
        """
        env = os.environ if env is None else env
        cloud = cloud_config(env, provider(env))
        key = (api_key or env.get("ANTHROPIC_API_KEY") or "").strip()
        token = (env.get("ANTHROPIC_AUTH_TOKEN") or "").strip()
        url = (base_url or env.get("ANTHROPIC_BASE_URL") or settings_base_url or "").strip()
        helper = None if key or token else key_helper_config(api_key_helper, env)
        if helper is not None:
            helper = replace(helper, env=tuple(sorted(env.items())))
        if cloud is None and not (key or token or helper or url):
            raise MissingApiKey()
        return cls(
            api_key=key or None,
            model=resolve_model(cli_model, settings_model, env),
            base_url=url or None,
            auth_token=token or None,
            key_helper=helper,
            headers=custom_headers(env),
            cloud=cloud,
            idle_timeout=stream_idle_timeout(env),
            max_retries=max_retries(env, DEFAULT_MAX_RETRIES),
            proxy=proxy_for(url or None, env),
            thinking_budget=_thinking_budget(env),
        )


def _thinking_budget(env: Mapping[str, str]) -> int | None:
    """``MAX_THINKING_TOKENS`` as Claude Code reads it: a positive integer turns thinking on
    (the API's minimum budget is 1,024 tokens); 0, empty or garbage leaves it off."""
    raw = (env.get("MAX_THINKING_TOKENS") or "").strip()
    if not raw.isdigit() or int(raw) <= 0:
        return None
    return budget_of(int(raw))
