"""Running one hook handler with the runner of its kind: a prompt or agent verdict, an SDK
callback, an HTTP request or a process; a guard Nerve cannot run denies.

``HookRunner`` imports this module when a hook first runs, so a session without hooks loads none
of the runners (``tests/agent_cli/session/test_startup_imports.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from permissions.types import Decision
from tools.hooks.callbacks import run_callback_hook
from tools.hooks.http import run_http_hook
from tools.hooks.matcher import HookHandler
from tools.hooks.output import HandlerEffect, interpret_result
from tools.hooks.process import run_process
from tools.hooks.verdict import run_agent_hook, run_prompt_hook

if TYPE_CHECKING:
    from tools.hooks.runner import HookRunner

__all__ = ["run_handler", "unrunnable_effect"]


def unrunnable_effect(h: HookHandler, event: str) -> HandlerEffect:
    """A guard Nerve cannot run denies (fails closed) instead of being skipped."""
    msg = (
        f"{event} hook of type {h.unrunnable!r} cannot run in Nerve yet; the call is denied "
        "(change the hook to a command hook or remove it)"
    )
    e = HandlerEffect(h.name, system_messages=[msg])
    if event == "PreToolUse":
        e.decision, e.decision_reason = Decision.DENY, msg
    else:
        e.perm_decision, e.perm_message = Decision.DENY, msg
    return e


async def run_handler(
    runner: HookRunner, h: HookHandler, event: str, stdin: bytes, env: Mapping[str, str]
) -> HandlerEffect:
    """Run ``h`` for ``event`` with ``stdin`` (the hook input) and ``env``; never raises."""
    if h.unrunnable is not None:
        return unrunnable_effect(h, event)
    if h.kind == "prompt":
        return await run_prompt_hook(h, event, stdin.decode(), runner.side_model, h.timeout_s)
    if h.kind == "agent":
        return await run_agent_hook(h, event, stdin.decode(), runner.agent_hook, h.timeout_s)
    if h.kind == "callback":
        return await run_callback_hook(h, event, stdin, runner.hook_callback)
    timeout = h.timeout_s if h.timeout_s is not None else runner.default_timeout_s
    if h.kind == "http":
        return await run_http_hook(h, event, stdin, env, timeout)
    try:
        result = await run_process(
            runner.argv(h, env), stdin_data=stdin, cwd=runner.cwd, env=env, timeout_s=timeout
        )
        return interpret_result(h.name, event, result, timeout)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the runner never raises because of one hook
        return HandlerEffect(h.name, system_messages=[f"{event} hook error: {h.name}: {exc!r}"])
