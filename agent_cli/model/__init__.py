"""The model client: configuration, streaming with retries, usage and cost.

Importing this package stays light: ``ModelClient`` (and with it httpx) loads on first use; the
anthropic SDK only ever for Bedrock or Vertex (``agent_cli.model.transport``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.model.config import (
    DEFAULT_MODEL,
    MODEL_ALIASES,
    MissingApiKey,
    ModelConfig,
    resolve_model,
)
from agent_cli.model.endpoint import ModelConfigError
from agent_cli.model.retry import RetryNotice, RetryPolicy, parse_retry_after
from agent_cli.model.turn import AssistantTurn, ModelError
from agent_cli.model.usage import SessionUsage, Usage, cost_usd, estimate_cost

if TYPE_CHECKING:
    from agent_cli.model.client import ModelClient

__all__ = [
    "DEFAULT_MODEL",
    "MODEL_ALIASES",
    "AssistantTurn",
    "MissingApiKey",
    "ModelClient",
    "ModelConfig",
    "ModelConfigError",
    "ModelError",
    "RetryNotice",
    "RetryPolicy",
    "SessionUsage",
    "Usage",
    "cost_usd",
    "estimate_cost",
    "parse_retry_after",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    if name == "ModelClient":
        from agent_cli.model.client import ModelClient

        return ModelClient
    raise AttributeError(f"module 'agent_cli.model' has no attribute {name!r}")
