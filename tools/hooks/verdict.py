"""Model-evaluated hooks (Claude Code's ``prompt`` and ``agent`` types): prompt, verdict, effect.

The hook's ``prompt`` gets the event JSON (``$ARGUMENTS`` replaced, else appended); a model
answers with Claude Code's verdict ``{"ok": true|false, "reason": "..."}``. ``ok: false`` acts as
a blocking hook does (exit code 2) with the reason: PreToolUse denies the call, Stop keeps the
model going, UserPromptSubmit rejects the prompt... A model error, a timeout or an answer that is
not a verdict is an error the user sees; on a guard event (PreToolUse, PermissionRequest) the
call is also denied, since a guard that could not decide must not let the call through.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from permissions.types import Decision
from tools.hooks.matcher import GUARD_EVENTS, HookHandler
from tools.hooks.output import HandlerEffect, apply_block
from tools.records import datarecord
from tools.side_model import FAST, SideModel, SideModelError, SideRequest

__all__ = [
    "DEFAULT_MODEL_HOOK_TIMEOUTS",
    "PROMPT_HOOK_SYSTEM",
    "HookAgent",
    "Verdict",
    "VerdictError",
    "failed_effect",
    "parse_verdict",
    "render_prompt",
    "run_agent_hook",
    "run_model_hook",
    "run_prompt_hook",
    "verdict_effect",
]

# Claude Code's defaults, in seconds: prompt 30, agent 60.
DEFAULT_MODEL_HOOK_TIMEOUTS = {"prompt": 30.0, "agent": 60.0}

PROMPT_HOOK_SYSTEM = (
    "You are evaluating a hook in Nerve, a coding agent. You are given the hook's instructions "
    "and the JSON input of the event it runs on (a tool call, a prompt, the end of a turn...). "
    "Decide whether the condition the instructions describe is met.\n"
    "Answer with ONLY one JSON object, no markdown and nothing around it:\n"
    '{"ok": true} when it is met, or {"ok": false, "reason": "why, and what to do instead"} '
    "when it is not."
)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@datarecord(frozen=True, slots=True)
class Verdict:
    """A model hook's answer: ``ok`` false blocks where the event can block, with ``reason``."""

    ok: bool
    reason: str | None = None


@runtime_checkable
class HookAgent(Protocol):
    """Runs an ``agent`` hook's read-only sub-agent (``agent_cli.agents.hook_agent``): the
    agent's final text, to be parsed as a verdict; raises when the run fails."""

    async def evaluate(self, prompt: str, *, model: str | None = None) -> str: ...


class VerdictError(ValueError):
    """The model's answer is not a verdict object."""


def render_prompt(template: str, event_json: str) -> str:
    """Claude Code's rule: ``$ARGUMENTS`` is replaced by the event JSON, else it is appended."""
    if "$ARGUMENTS" in template:
        return template.replace("$ARGUMENTS", event_json)
    return f"{template}\n\n{event_json}"


def parse_verdict(text: str) -> Verdict:
    """Parse ``{"ok": bool, "reason"?: str}`` (a ```json fence around it is tolerated)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    preview = " ".join(text.split())[:200] or "(an empty answer)"
    try:
        obj = json.loads(body)
    except ValueError:
        raise VerdictError(f"not JSON: {preview}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("ok"), bool):
        raise VerdictError(f'expected {{"ok": true|false, "reason": "..."}}, got: {preview}')
    reason = obj.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise VerdictError(f"'reason' must be a string, got: {preview}")
    return Verdict(obj["ok"], reason.strip() if reason and reason.strip() else None)


def verdict_effect(h: HookHandler, event: str, verdict: Verdict) -> HandlerEffect:
    """``ok: true`` has no effect (the call goes on through the usual checks); ``ok: false``
    blocks as exit code 2 does, the reason going where the event sends it."""
    e = HandlerEffect(h.name)
    if not verdict.ok:
        reason = verdict.reason or "no reason given"
        apply_block(e, event, f"{h.kind.capitalize()} hook condition was not met: {reason}")
    return e


def failed_effect(h: HookHandler, event: str, problem: str) -> HandlerEffect:
    """A model hook that gave no verdict: the user is told; a guard denies (fails closed)."""
    guard = event in GUARD_EVENTS
    msg = f"{event} {h.name} failed: {problem}" + ("; the call is denied" if guard else "")
    e = HandlerEffect(h.name, system_messages=[msg])
    if event == "PreToolUse":
        e.decision, e.decision_reason = Decision.DENY, msg
    elif event == "PermissionRequest":
        e.perm_decision, e.perm_message = Decision.DENY, msg
    return e


async def run_model_hook(
    h: HookHandler,
    event: str,
    ask: Callable[[], Awaitable[str]],
    timeout_s: float | None,
) -> HandlerEffect:
    """Await ``ask`` (the model's final text) within the timeout and turn it into an effect."""
    timeout = timeout_s if timeout_s is not None else DEFAULT_MODEL_HOOK_TIMEOUTS[h.kind]
    try:
        text = await asyncio.wait_for(ask(), timeout)
    except TimeoutError:
        return failed_effect(h, event, f"no verdict within {timeout:g}s (timeout)")
    except SideModelError as exc:
        return failed_effect(h, event, f"the model request failed ({exc.message})")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the runner never raises because of one hook
        return failed_effect(h, event, f"{type(exc).__name__}: {exc}")
    try:
        verdict = parse_verdict(text)
    except VerdictError as exc:
        return failed_effect(h, event, f"the model's answer is not a verdict ({exc})")
    return verdict_effect(h, event, verdict)


async def run_prompt_hook(
    h: HookHandler,
    event: str,
    event_json: str,
    side: SideModel | None,
    timeout_s: float | None,
) -> HandlerEffect:
    """A ``prompt`` hook: one request to the fast model (or the hook's ``model``)."""
    if side is None:
        return failed_effect(h, event, "no model is available to evaluate it here")
    from tools.context import AbortSignal  # lazy: tools.context is imported by the pipeline

    request = SideRequest(
        system=PROMPT_HOOK_SYSTEM,
        messages=[{"role": "user", "content": render_prompt(h.command, event_json)}],
        model=h.model or FAST,
        max_tokens=1024,
    )

    async def ask() -> str:
        return (await side.query(request, AbortSignal())).text

    return await run_model_hook(h, event, ask, timeout_s)


async def run_agent_hook(
    h: HookHandler,
    event: str,
    event_json: str,
    agent: HookAgent | None,
    timeout_s: float | None,
) -> HandlerEffect:
    """An ``agent`` hook: a read-only sub-agent investigates, its final answer is the verdict."""
    if agent is None:
        return failed_effect(h, event, "no sub-agent can run it here")
    prompt = render_prompt(h.command, event_json)
    return await run_model_hook(h, event, lambda: agent.evaluate(prompt, model=h.model), timeout_s)
