"""The model client: configuration, streaming with retries, usage and cost.

Importing this package stays light: ``ModelClient`` (and with it httpcore) and ``context_window``
load on first use; the anthropic SDK only ever for Bedrock or Vertex
(``agent_cli.model.transport``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.model.config import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    MODEL_ALIASES,
    MissingApiKey,
    ModelConfig,
    resolve_model,
)
from agent_cli.model.endpoint import ModelConfigError
from agent_cli.model.names import expand_alias, small_fast_model, subagent_model
from agent_cli.model.retry import RetryNotice, RetryPolicy, parse_retry_after
from agent_cli.model.thinking import (
    EFFORT_LEVELS,
    ThinkingChoice,
    budget_of,
    effort_level,
    has_effort,
)
from agent_cli.model.turn import AssistantTurn, ModelError, TurnCallbacks, TurnRequest
from agent_cli.model.usage import SessionUsage, Usage, cost_usd, estimate_cost

if TYPE_CHECKING:
    from agent_cli.model.client import ModelClient
    from agent_cli.model.windows import context_window

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "EFFORT_LEVELS",
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
    "ThinkingChoice",
    "TurnCallbacks",
    "TurnRequest",
    "Usage",
    "budget_of",
    "context_window",
    "cost_usd",
    "effort_level",
    "estimate_cost",
    "expand_alias",
    "has_effort",
    "parse_retry_after",
    "resolve_model",
    "small_fast_model",
    "subagent_model",
]


def __getattr__(name: str) -> Any:
    if name == "ModelClient":
        from agent_cli.model.client import ModelClient

        return ModelClient
    if name == "context_window":
        from agent_cli.model.windows import context_window

        return context_window
    raise AttributeError(f"module 'agent_cli.model' has no attribute {name!r}")
