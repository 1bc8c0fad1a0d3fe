"""``callback`` hooks: a function of the program that embeds Nerve (the Agent SDK's hooks).

The SDK registers its hooks in ``initialize``: event -> matcher groups, each ``{"matcher",
"hookCallbackIds", "timeout", "onFailure"}``; ``parse_callback_hooks`` turns them into handlers
of kind ``callback`` (the id is the handler's ``command``) that join the configured hooks of the
same event, after them. When one matches, the runner calls the injected ``HookCallback`` with
the id, the event JSON (the same a command hook reads on stdin) and the tool_use_id; the reply
is read exactly as a command hook's JSON stdout (``continue``, ``decision``, ``reason``,
``systemMessage``, ``hookSpecificOutput``...).

A callback that fails — raises (an error answer), gives no answer in time, or replies with a
value the protocol rejects (``permissionDecision: "Deny"``) — acts by its group's
``onFailure``: ``continue`` counts it as no decision; ``block`` blocks what the event can block
(a tool call, a prompt); unset, a guard (PreToolUse, PermissionRequest) denies and other events
only warn. Claude Code reads unset as ``continue``; Nerve fails a guard closed, as it does for
an ``http`` hook that cannot answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from tools.hooks.matcher import (
    GUARD_EVENTS,
    KNOWN_EVENTS,
    MATCHERLESS_EVENTS,
    HookHandler,
    Matcher,
    compile_matcher,
)
from tools.hooks.output import HandlerEffect, apply_block, interpret_result
from tools.hooks.process import ProcessResult

__all__ = [
    "CALLBACK_TIMEOUT_S",
    "HookCallback",
    "HookConfigError",
    "failure_effect",
    "parse_callback_hooks",
    "run_callback_hook",
]

# The SDK's documented default for a matcher without ``timeout``.
CALLBACK_TIMEOUT_S = 60.0
# Events whose ``onFailure: "block"`` the SDK documents as ignored.
_NEVER_BLOCK_ON_FAILURE = frozenset({"Stop", "SubagentStop", "TaskCompleted", "TeammateIdle"})
_DECISIONS = (None, "approve", "block")
_PERMISSION_DECISIONS = (None, "allow", "ask", "deny", "defer")

HookCallback = Callable[[str, dict[str, Any], str | None], Awaitable[Any]]
"""``(callback_id, hook input, tool_use_id) -> the reply``; raises when it failed."""


class HookConfigError(ValueError):
    """Hook callbacks the SDK registered that cannot be registered as given (says why)."""


def _group_handlers(event: str, gi: int, group: Any) -> list[HookHandler]:
    where = f"hooks.{event}[{gi}]"
    if not isinstance(group, Mapping):
        raise HookConfigError(f"{where}: a matcher group must be an object")
    ids = group.get("hookCallbackIds")
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise HookConfigError(f"{where}: 'hookCallbackIds' must be a list of callback ids")
    problems: list[str] = []
    matcher = compile_matcher(group.get("matcher"), problems.append)
    if problems:  # a guard whose matcher never matches would fail open
        raise HookConfigError(f"{where}: {problems[0]}")
    if event in MATCHERLESS_EVENTS:
        matcher = Matcher(matcher.source)
    timeout = group.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise HookConfigError(f"{where}: 'timeout' must be a positive number of seconds")
    on_failure = group.get("onFailure")
    if on_failure is not None and not isinstance(on_failure, str):
        raise HookConfigError(f'{where}: \'onFailure\' must be "continue" or "block"')
    if on_failure not in (None, "continue"):
        on_failure = "block"  # as Claude Code reads any other value
    return [
        HookHandler(
            event=event,
            matcher=matcher,
            command=cid,
            timeout_s=float(timeout) if timeout is not None else CALLBACK_TIMEOUT_S,
            kind="callback",
            on_failure=on_failure,
        )
        for cid in ids
    ]


def parse_callback_hooks(config: Any, warn: Callable[[str], None]) -> dict[str, list[HookHandler]]:
    """The ``hooks`` of an ``initialize`` request as handlers by event (None: no hooks).

    Unlike settings (lenient: a typo must not take a session down), a malformed registration
    raises ``HookConfigError``: the program asked for a hook, and skipping it could let a call
    through that the hook would have stopped. An event Nerve never fires only warns.
    """
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise HookConfigError(f"'hooks' must be an object of events, got {type(config).__name__}")
    out: dict[str, list[HookHandler]] = {}
    for event, groups in config.items():
        if not isinstance(event, str) or not event:
            raise HookConfigError(f"hook event name {event!r} is not a string")
        if not isinstance(groups, list):
            raise HookConfigError(f"hooks.{event}: expected a list of matcher groups")
        if event not in KNOWN_EVENTS:
            warn(f"SDK hooks: unknown hook event {event!r} (kept, but nothing fires it)")
        for gi, group in enumerate(groups):
            out.setdefault(event, []).extend(_group_handlers(event, gi, group))
    return out


def _reply_problem(reply: Any) -> str | None:
    """Why ``reply`` is not a hook output the protocol accepts (None: it is one)."""
    if not isinstance(reply, Mapping):
        return f"the reply is not an object ({type(reply).__name__})"
    if reply.get("decision") not in _DECISIONS:
        return f"invalid decision {reply.get('decision')!r}"
    hso = reply.get("hookSpecificOutput")
    if isinstance(hso, Mapping) and hso.get("permissionDecision") not in _PERMISSION_DECISIONS:
        return f"invalid permissionDecision {hso.get('permissionDecision')!r}"
    return None


def failure_effect(h: HookHandler, event: str, problem: str) -> HandlerEffect:
    """A callback that failed, acting by its group's ``onFailure`` (see module docstring)."""
    blocks = h.on_failure == "block" and event not in _NEVER_BLOCK_ON_FAILURE
    denies = blocks or (h.on_failure is None and event in GUARD_EVENTS)
    stops = "; the call is denied" if event in GUARD_EVENTS else "; it is blocked"
    msg = f"{event} {h.name} failed: {problem}" + (stops if denies else "")
    e = HandlerEffect(h.name, system_messages=[msg])
    if denies:
        apply_block(e, event, msg)
    return e


async def run_callback_hook(
    h: HookHandler, event: str, body: bytes, callback: HookCallback | None
) -> HandlerEffect:
    """Call the program's hook ``h.command`` with the event JSON ``body``; its reply is the
    hook's output."""
    if callback is None:
        return failure_effect(h, event, "no program is connected to answer it")
    data = json.loads(body)
    tool_use_id = data.get("tool_use_id")
    timeout = h.timeout_s or CALLBACK_TIMEOUT_S
    try:
        reply = await asyncio.wait_for(
            callback(h.command, data, tool_use_id if isinstance(tool_use_id, str) else None),
            timeout,
        )
    except asyncio.CancelledError:
        raise
    except TimeoutError:
        return failure_effect(h, event, f"no answer within {timeout:g}s (timeout)")
    except Exception as exc:  # the program's error answer, or stdin closed
        return failure_effect(h, event, str(exc) or type(exc).__name__)
    problem = _reply_problem(reply)
    if problem is not None:
        return failure_effect(h, event, problem)
    text = json.dumps(reply, default=str)
    return interpret_result(h.name, event, ProcessResult(0, stdout=text), timeout)
