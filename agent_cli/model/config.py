"""Which model, where, with which key: resolution from flags, settings and the environment.

Light on purpose (no SDK import) so the CLI can resolve and report a missing key cheaply.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "DEFAULT_TIMEOUT",
    "MODEL_ALIASES",
    "MissingApiKey",
    "ModelConfig",
    "resolve_model",
]

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_MAX_TOKENS = 16_000
DEFAULT_TIMEOUT = 600.0
# Short names users type; values are the current ids (update here when models move on).
MODEL_ALIASES: dict[str, str] = {
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-5",
    "haiku": "claude-haiku-4-5",
}
# With a custom endpoint that authenticates by itself (a local proxy) no key is needed, but the
# SDK refuses to send a request without one; this placeholder is what it gets.
NO_KEY_PLACEHOLDER = "no-key-needed"


class MissingApiKey(Exception):
    """No API key and no custom endpoint: the message tells the user how to fix it."""

    def __init__(self) -> None:
        super().__init__(
            "No API key found. Set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...), "
            "or set ANTHROPIC_BASE_URL to use a compatible endpoint. "
            "To look around without a key, try `nerve demo` for an offline tour."
        )


def resolve_model(
    cli_model: str | None = None,
    settings_model: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """``--model`` > settings ``model`` > ``ANTHROPIC_MODEL`` > DEFAULT_MODEL; aliases expanded."""
    env = os.environ if env is None else env
    for candidate in (cli_model, settings_model, env.get("ANTHROPIC_MODEL")):
        if candidate and candidate.strip():
            name = candidate.strip()
            return MODEL_ALIASES.get(name.lower(), name)
    return DEFAULT_MODEL


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Everything the client needs to reach the model."""

    api_key: str
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float = DEFAULT_TIMEOUT

    def __repr__(self) -> str:  # never print the key
        return (
            f"ModelConfig(model={self.model!r}, base_url={self.base_url!r}, "
            f"max_tokens={self.max_tokens}, timeout={self.timeout})"
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
        max_tokens: int | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ModelConfig:
        """Resolve from explicit values (a flag, settings, an ``apiKeyHelper``'s output) and env.

        Key: ``api_key`` > ``ANTHROPIC_API_KEY``. Base URL: ``base_url`` > ``ANTHROPIC_BASE_URL`` >
        settings. Raises MissingApiKey when there is neither a key nor a custom base URL.
        """
        env = os.environ if env is None else env
        key = (api_key or env.get("ANTHROPIC_API_KEY") or "").strip()
        url = (base_url or env.get("ANTHROPIC_BASE_URL") or settings_base_url or "").strip()
        if not key:
            if not url:
                raise MissingApiKey()
            key = NO_KEY_PLACEHOLDER
        return cls(
            api_key=key,
            model=resolve_model(cli_model, settings_model, env),
            base_url=url or None,
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            timeout=timeout or DEFAULT_TIMEOUT,
        )
