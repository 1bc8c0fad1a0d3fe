"""What a request says about thinking and effort, per model (issue 17 item 4).

* Thinking is on with ``MAX_THINKING_TOKENS=N`` (a budget) or the setting
  ``alwaysThinkingEnabled: true``. Models with adaptive thinking get ``{"type": "adaptive"}``
  when no budget was asked for, and always when they support nothing else (a budget there is a
  400); older models get ``{"type": "enabled", "budget_tokens": N}`` (31,999 without
  ``MAX_THINKING_TOKENS``), ``max_tokens`` raised to leave room for the answer.
* Effort: ``CLAUDE_CODE_EFFORT_LEVEL`` over the setting ``effortLevel`` (low, medium, high, xhigh,
  max), sent as ``output_config.effort`` to the models that have it, never to others.
* ``/model`` may override both for the session (a ``ThinkingChoice``): thinking off, on
  (adaptive where the model has it, or a budget) and an effort level; the next request uses it.
"""

from __future__ import annotations

from typing import Any, Final

from tools.records import datarecord

__all__ = [
    "DEFAULT_BUDGET",
    "EFFORT_LEVELS",
    "MIN_BUDGET",
    "ThinkingChoice",
    "budget_of",
    "effort_level",
    "has_effort",
    "thinking_fields",
    "thinking_kind",
]

DEFAULT_BUDGET: Final = 31_999
MIN_BUDGET: Final = 1_024  # the API refuses a smaller budget_tokens


def budget_of(tokens: int) -> int:
    """A thinking budget asked for (``MAX_THINKING_TOKENS``, a flag, the SDK) as the API takes it."""
    return max(MIN_BUDGET, tokens)


EFFORT_LEVELS: Final = ("low", "medium", "high", "xhigh", "max")
_ADAPTIVE_ONLY: Final = (
    "claude-opus-4-7",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-haiku-5",
    "claude-mythos",
    "claude-fable",
)
_ADAPTIVE: Final = (*_ADAPTIVE_ONLY, "claude-opus-4-6", "claude-sonnet-4-6")
_EFFORT: Final = (*_ADAPTIVE, "claude-opus-4-5")


def _has(model: str, families: tuple[str, ...]) -> bool:
    # provider ids carry prefixes and suffixes: us.anthropic.claude-opus-4-6-v1, ...@2025
    return any(f in model for f in families)


def thinking_kind(model: str) -> str:
    """``"adaptive-only"`` (a budget is refused), ``"adaptive"`` (or a budget) or ``"budget"``."""
    if _has(model, _ADAPTIVE_ONLY):
        return "adaptive-only"
    return "adaptive" if _has(model, _ADAPTIVE) else "budget"


def has_effort(model: str) -> bool:
    """The model takes ``output_config.effort``."""
    return _has(model, _EFFORT)


@datarecord(frozen=True, slots=True)
class ThinkingChoice:
    """What ``/model`` chose for the session, over ``MAX_THINKING_TOKENS`` and the settings.

    ``enabled``: None keeps the configured thinking; False turns it off; True turns it on, with
    ``budget`` tokens for the models that take a budget (None: adaptive where the model has it,
    the configured or default budget elsewhere). ``effort``: None keeps the configured level.
    """

    enabled: bool | None = None
    budget: int | None = None
    effort: str | None = None

    def over(
        self, budget: int | None, always: bool, effort: str | None
    ) -> tuple[int | None, bool, str | None]:
        """(budget, always, effort) for ``thinking_fields``: this choice over the configured."""
        if self.enabled is False:
            budget, always = None, False
        elif self.enabled:
            budget, always = self.budget, True
        return budget, always, self.effort or effort


def effort_level(env_value: str | None, setting: Any) -> tuple[str | None, str | None]:
    """(the effort level, a warning) from ``CLAUDE_CODE_EFFORT_LEVEL`` and ``effortLevel``."""
    for source, value in (("CLAUDE_CODE_EFFORT_LEVEL", env_value), ("effortLevel", setting)):
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        level = str(value).strip().lower()
        if level in EFFORT_LEVELS:
            return level, None
        return None, f"{source}={value!r} ignored (expected one of {', '.join(EFFORT_LEVELS)})"
    return None, None


def thinking_fields(
    model: str, max_tokens: int, *, budget: int | None, always: bool, effort: str | None
) -> dict[str, Any]:
    """The request fields (``thinking``, ``max_tokens``, ``output_config``) for ``model``."""
    out: dict[str, Any] = {}
    if budget is not None or always:
        if _has(model, _ADAPTIVE_ONLY) or (budget is None and _has(model, _ADAPTIVE)):
            out["thinking"] = {"type": "adaptive"}
        else:
            tokens = budget or DEFAULT_BUDGET
            out["thinking"] = {"type": "enabled", "budget_tokens": tokens}
            out["max_tokens"] = max(max_tokens, tokens + 4096)
    if effort and _has(model, _EFFORT):
        out["output_config"] = {"effort": effort}
    return out
