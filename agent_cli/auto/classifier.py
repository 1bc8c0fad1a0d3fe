"""The auto-mode safety classifier: two model stages decide what auto mode would otherwise ask.

The pipeline starts ``classify`` speculatively at step 5 (in auto mode only) and uses its verdict
at step 8 only for an ask a classifier may approve (never a deny rule, an ask rule or a safety
check only a human may approve). This module adds three things:

1. A pre-check: the engine judges the call first; only an approvable ask that auto mode sends to
   the classifier costs a model request (reads, allowed calls and human-only asks never do).
2. Stage 1: a fast model answers through a forced ``verdict`` tool: allow, block or unsure.
3. Stage 2, for "unsure": a careful model with extended thinking (which the API does not allow
   with a forced tool choice) ends its answer with ``DECISION: allow|block``, parsed strictly.

What the reviewers read and how their answers are parsed is ``agent_cli.auto.classifier_prompt``
(injection-resistant: nonce-tagged data, never tool output). Any failure (API error, timeout, abort,
an answer that does not parse) is ``None``: no opinion, the user is asked.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pydantic

from agent_cli.auto.classifier_prompt import (
    CAREFUL_SYSTEM,
    FAST_SYSTEM,
    VERDICT_TOOL,
    latest_user_requests,
    one_line,
    parse_careful,
    parse_fast,
    render_review,
)
from agent_cli.model.config import MODEL_ALIASES
from agent_cli.model.names import expand_alias, small_fast_model
from agent_cli.model.turn import TurnRequest
from agent_cli.model.usage import Usage
from permissions.types import Decision, ReasonKind, RuleBehavior, Verdict
from tools.context import ToolUseContext
from tools.records import datarecord

__all__ = [
    "CAREFUL_SYSTEM",
    "DEFAULT_FAST_MODEL",
    "FAST_SYSTEM",
    "VERDICT_TOOL",
    "ClassifierConfig",
    "ModelSafetyClassifier",
    "latest_user_requests",
    "parse_careful",
    "parse_fast",
    "render_review",
]

DEFAULT_FAST_MODEL = MODEL_ALIASES["haiku"]
UsageSink = Callable[[str, Usage], None]


@datarecord(frozen=True, slots=True)
class ClassifierConfig:
    """Models, time bounds and sizes. ``careful_model`` None: the session's current model."""

    fast_model: str = DEFAULT_FAST_MODEL
    careful_model: str | None = None
    fast_timeout: float = 15.0
    careful_timeout: float = 45.0
    thinking_budget: int = 2048
    fast_max_tokens: int = 512
    max_request_chars: int = 4000
    earlier_requests: int = 2

    @classmethod
    def from_settings(
        cls, extras: Mapping[str, Any], env: Mapping[str, str] | None = None
    ) -> ClassifierConfig:
        """``autoModeFastModel`` / ``autoModeModel`` settings keys (aliases expanded, remapped
        by ``env``); a value that is not a non-empty string is ignored. Without
        ``autoModeFastModel`` the first stage uses the session's small fast model
        (``ANTHROPIC_SMALL_FAST_MODEL``, else the ``haiku`` alias). ``env`` is the session
        environment (default ``os.environ``)."""

        def model(key: str) -> str | None:
            value = extras.get(key)
            if isinstance(value, str) and value.strip():
                return expand_alias(value, env)
            return None

        return cls(
            fast_model=model("autoModeFastModel") or small_fast_model(env),
            careful_model=model("autoModeModel"),
        )


def _classifier_may_decide(verdict: Verdict) -> bool:
    """Only auto mode's own ask — never an ask rule or a human-only safety check."""
    if verdict.decision is not Decision.ASK or verdict.kind is not ReasonKind.CLASSIFIER:
        return False
    if verdict.safety is not None and not verdict.safety.classifier_approvable:
        return False
    return verdict.rule is None or verdict.rule.behavior is not RuleBehavior.ASK


class ModelSafetyClassifier:
    """``tools.pipeline.types.SafetyClassifier`` on the session's model client.

    ``model_client`` offers ``stream_turn(TurnRequest, *, abort)``
    (``agent_cli.model.client.ModelClient``); ``main_model`` gives the session's
    current model (stage 2's default); ``conversation`` the parent conversation, where the
    user's latest request is read (falling back to ``ctx.state.messages``); ``on_usage`` gets
    the tokens of every classifier request, for the session's totals.
    """

    def __init__(
        self,
        model_client: Any,
        *,
        config: ClassifierConfig | None = None,
        main_model: Callable[[], str] | None = None,
        conversation: Callable[[], Sequence[Mapping[str, Any]]] | None = None,
        on_usage: UsageSink | None = None,
    ) -> None:
        self.client = model_client
        self.config = config or ClassifierConfig()
        self._main_model = main_model
        self._conversation = conversation
        self._on_usage = on_usage
        self.reviews = 0  # calls that reached the model (for tests and /status)

    async def classify(
        self, tool_name: str, tool_input: dict[str, Any], ctx: ToolUseContext
    ) -> Verdict | None:
        """ALLOW or DENY (kind CLASSIFIER), or None: no opinion, the user is asked."""
        try:
            pending = await self._needs_review(tool_name, tool_input, ctx)
            if pending is None:
                return None
            return await self._review(tool_name, tool_input, ctx, pending)
        except Exception as exc:  # never out of classify: a broken classifier asks the user
            _notify(ctx, f"auto-mode classifier failed ({type(exc).__name__}); asking you")
            return None

    async def _needs_review(
        self, tool_name: str, tool_input: dict[str, Any], ctx: ToolUseContext
    ) -> Verdict | None:
        """The engine's verdict when auto mode would send the call here, else None.

        Step 5 runs before the engine, for every call; judging first keeps reads, allowed calls
        and human-only asks from costing a model request.
        """
        from permissions.engine import decide
        from tools.pipeline.permission import build_request
        from tools.pipeline.types import CallState, ToolCall, find_tool

        tool = find_tool(ctx.options.tools, tool_name)
        if tool is None or not isinstance(tool_input, dict):
            return None
        try:
            parsed = tool.input_model.model_validate(tool_input)
        except pydantic.ValidationError:
            return None
        state = CallState(ToolCall("classifier-precheck", tool.name, dict(tool_input)), ctx)
        state.tool = tool
        state.set_input(parsed, tool.backfill_input(parsed, ctx))
        verdict: Verdict = decide(await build_request(state), ctx.permissions)
        return verdict if _classifier_may_decide(verdict) else None

    def _requests(self, ctx: ToolUseContext) -> list[str]:
        messages = self._conversation() if self._conversation is not None else ctx.state.messages
        return latest_user_requests(messages, 1 + self.config.earlier_requests)

    async def _review(
        self, tool_name: str, tool_input: dict[str, Any], ctx: ToolUseContext, pending: Verdict
    ) -> Verdict | None:
        self.reviews += 1
        cfg = self.config
        nonce = secrets.token_hex(8)
        message = render_review(
            nonce=nonce,
            requests=self._requests(ctx),
            tool_name=tool_name,
            tool_input=tool_input,
            flagged=pending.reason,
            cwd=str(ctx.cwd),
            max_chars=cfg.max_request_chars,
        )
        messages = [{"role": "user", "content": [{"type": "text", "text": message}]}]
        fast = await self._stage(
            ctx,
            cfg.fast_model,
            FAST_SYSTEM,
            messages,
            tools=[VERDICT_TOOL],
            extra={"tool_choice": {"type": "tool", "name": VERDICT_TOOL["name"]}},
            max_tokens=cfg.fast_max_tokens,
            timeout=cfg.fast_timeout,
        )
        if fast is None:
            return None
        decision, reason = parse_fast(fast.content)
        if decision != "unsure":
            return _verdict(decision, reason, f"fast stage ({cfg.fast_model})", pending)
        careful_model = cfg.careful_model or (
            self._main_model() if self._main_model else cfg.fast_model
        )
        careful = await self._stage(
            ctx,
            careful_model,
            CAREFUL_SYSTEM,
            messages,
            tools=[],
            extra={"thinking": {"type": "enabled", "budget_tokens": cfg.thinking_budget}},
            max_tokens=cfg.thinking_budget + 1024,
            timeout=cfg.careful_timeout,
        )
        if careful is None:
            return None
        parsed = parse_careful(careful.text)
        if parsed is None:
            _notify(ctx, "auto-mode classifier gave no clear decision; asking you")
            return None
        return _verdict(*parsed, f"careful stage ({careful_model})", pending)

    async def _stage(
        self,
        ctx: ToolUseContext,
        model: str,
        system: str,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]],
        extra: dict[str, Any],
        max_tokens: int,
        timeout: float,
    ) -> Any:
        """One bounded request: the turn, or None on any failure (error, timeout, abort)."""
        try:
            turn = await asyncio.wait_for(
                self.client.stream_turn(
                    TurnRequest(
                        system, messages, tools, model=model, max_tokens=max_tokens, extra=extra
                    ),
                    abort=ctx.abort,
                ),
                timeout,
            )
        except TimeoutError:
            _notify(ctx, f"auto-mode classifier timed out after {timeout:g} s; asking you")
            return None
        except Exception as exc:
            _notify(ctx, f"auto-mode classifier unavailable ({one_line(str(exc))}); asking you")
            return None
        if self._on_usage is not None:
            try:
                self._on_usage(turn.model or model, turn.usage)
            except Exception:
                pass  # accounting must not change the decision
        if turn.aborted or turn.partial or turn.error:
            return None
        return turn


def _verdict(decision: str, reason: str, stage: str, pending: Verdict) -> Verdict:
    why = reason or "no reason given"
    if decision == "allow":
        text = f"approved by the auto-mode classifier: {why}"
        outcome = Decision.ALLOW
    else:
        text = f"blocked by the auto-mode classifier: {why}"
        outcome = Decision.DENY
    return Verdict(
        outcome,
        text,
        ReasonKind.CLASSIFIER,
        trace=(*pending.trace, f"auto-mode classifier, {stage}: {decision} — {why}"),
    )


def _notify(ctx: ToolUseContext, text: str) -> None:
    try:
        ctx.callbacks.notify(text)
    except Exception:
        pass  # a UI failure must not change the decision
