"""How one hook's exit code and stdout become its effect (Claude Code's output protocol).

Exit 0: stdout is JSON if it starts with ``{``, else plain text (model context only for the
prompt/session-start events). Exit 2: block where the event can block, stderr as the reason.
Other codes: a non-blocking warning, unless stdout is a JSON object, which then decides alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

from permissions.types import Decision
from tools.hooks.process import ProcessResult
from tools.records import datarecord

__all__ = ["UNSET", "HandlerEffect", "apply_block", "interpret_result"]

# Exit code 2 blocks these events (stderr is the reason).
_EXIT2_BLOCK_EVENTS = frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "Stop",
        "SubagentStop",
        "PreCompact",
        "PostToolBatch",
    }
)
# Top-level ``decision: "block"`` is honoured for these.
_JSON_BLOCK_EVENTS = _EXIT2_BLOCK_EVENTS | {
    "PostToolUse",
    "PostToolUseFailure",
    "ConfigChange",
    "TaskCreated",
}
# Plain stdout of a successful hook becomes model context only here.
_PLAIN_CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "UserPromptExpansion", "SessionStart"})
_PERMISSION_DECISIONS = {"allow": Decision.ALLOW, "ask": Decision.ASK, "deny": Decision.DENY}
UNSET: Any = object()


@datarecord(slots=True)
class HandlerEffect:
    """What one handler asked for; the runner folds these into one typed outcome."""

    name: str
    stop: bool = False
    stop_reason: str | None = None
    system_messages: list[str] = field(default_factory=list)
    additional_context: list[str] = field(default_factory=list)
    blocked: bool = False
    block_reason: str | None = None
    decision: Decision | None = None
    decision_reason: str | None = None
    updated_input: dict[str, Any] | None = None
    updated_output: Any = UNSET
    perm_decision: Decision | None = None
    perm_message: str | None = None
    perm_interrupt: bool = False
    process: ProcessResult | None = None  # a command hook's process, as it ended


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def interpret_result(name: str, event: str, r: ProcessResult, timeout: float) -> HandlerEffect:
    """Turn one finished hook process into its effect (CC exit-code and JSON protocol)."""
    e = HandlerEffect(name, process=r)
    if r.spawn_error is not None:
        e.system_messages.append(f"{event} hook error: {name}: {r.spawn_error}")
        return e
    if r.timed_out:
        e.system_messages.append(f"{event} hook '{name}' timed out after {timeout:g}s")
        return e
    if r.stdout_truncated:
        e.system_messages.append(f"{event} hook '{name}': output over 1 MB was cut")
    obj = _json_answer(e, event, r.stdout)
    stderr = r.stderr.strip()
    if r.exit_code == 2:
        if obj is not None:
            _apply_json(e, event, obj)
        reason = _json_reason(obj) or stderr or f"blocked by hook {name}"
        apply_block(e, event, reason)
    elif obj is not None:
        _apply_json(e, event, obj)  # a JSON answer decides alone, whatever the exit code
    elif r.exit_code == 0:
        text = r.stdout.strip()
        if text and event in _PLAIN_CONTEXT_EVENTS:
            e.additional_context.append(text)
    else:
        first = stderr.splitlines()[0] if stderr else "No stderr output"
        e.system_messages.append(
            f"{event} hook error: Failed with non-blocking status code {r.exit_code}: {first}"
        )
    return e


def _json_answer(e: HandlerEffect, event: str, stdout: str) -> dict[str, Any] | None:
    """The JSON object a hook printed, if its stdout starts with ``{``; invalid JSON is noted
    and then read as plain text."""
    if not stdout.lstrip().startswith("{"):
        return None
    try:
        parsed = json.loads(stdout)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    e.system_messages.append(f"{event} hook '{e.name}' printed invalid JSON; treated as plain text")
    return None


def _json_reason(obj: Mapping[str, Any] | None) -> str | None:
    if obj is None:
        return None
    hso = obj.get("hookSpecificOutput")
    specific = hso.get("permissionDecisionReason") if isinstance(hso, Mapping) else None
    return _str_or_none(obj.get("reason")) or _str_or_none(specific)


def apply_block(e: HandlerEffect, event: str, reason: str) -> None:
    """Exit code 2 (or a model hook's ``ok: false``): block where the event can block; JSON
    ``allow`` cannot override it."""
    if event == "PreToolUse":
        e.decision, e.decision_reason = Decision.DENY, reason
        e.updated_input = None
    elif event == "PermissionRequest":
        e.perm_decision, e.perm_message = Decision.DENY, reason
    elif event in _EXIT2_BLOCK_EVENTS:
        e.blocked, e.block_reason = True, reason
    elif event in ("PostToolUse", "PostToolUseFailure"):
        e.additional_context.append(reason)  # the tool already ran: tell the model
    else:
        e.system_messages.append(f"{event} hook error: {reason}")


def _apply_json(e: HandlerEffect, event: str, obj: Mapping[str, Any]) -> None:
    """Apply one hook's JSON answer. Wrong types are ignored field by field."""
    if obj.get("continue") is False:
        e.stop = True
        e.stop_reason = _str_or_none(obj.get("stopReason"))
    message = _str_or_none(obj.get("systemMessage"))
    if message:
        e.system_messages.append(message)
    decision, reason = obj.get("decision"), _str_or_none(obj.get("reason"))
    if event == "PreToolUse" and decision in ("approve", "block"):
        # Deprecated top-level form, still mapped.
        e.decision = Decision.ALLOW if decision == "approve" else Decision.DENY
        e.decision_reason = reason
    elif decision == "block" and event in _JSON_BLOCK_EVENTS:
        e.blocked, e.block_reason = True, reason
    hso = _specific_output(e, event, obj.get("hookSpecificOutput"))
    if hso is None:
        return
    context = _str_or_none(hso.get("additionalContext"))
    if context:
        e.additional_context.append(context)
    apply_specific = _SPECIFIC_OUTPUT.get(event)
    if apply_specific is not None:
        apply_specific(e, hso, reason)


def _specific_output(e: HandlerEffect, event: str, hso: Any) -> Mapping[str, Any] | None:
    """``hookSpecificOutput`` when it is an object for this event; otherwise None (noted)."""
    if hso is None:
        return None
    if not isinstance(hso, Mapping):
        e.system_messages.append(f"{event} hook: hookSpecificOutput is not an object; ignored")
        return None
    named = hso.get("hookEventName")
    if named is not None and named != event:
        e.system_messages.append(f"{event} hook: hookSpecificOutput for {named!r} ignored")
        return None
    return hso


def _pre_tool_use_output(e: HandlerEffect, hso: Mapping[str, Any], reason: str | None) -> None:
    pd = hso.get("permissionDecision")
    if pd in _PERMISSION_DECISIONS:
        e.decision = _PERMISSION_DECISIONS[pd]
        e.decision_reason = _str_or_none(hso.get("permissionDecisionReason")) or reason
    elif pd == "defer":
        e.decision, e.decision_reason = None, None
    updated = hso.get("updatedInput")
    if isinstance(updated, dict):
        e.updated_input = updated


def _post_tool_use_output(e: HandlerEffect, hso: Mapping[str, Any], _reason: str | None) -> None:
    for key in ("updatedToolOutput", "updatedMCPToolOutput"):
        if hso.get(key) is not None:
            e.updated_output = hso[key]
            break


def _permission_request_output(
    e: HandlerEffect, hso: Mapping[str, Any], _reason: str | None
) -> None:
    d = hso.get("decision")
    if not isinstance(d, Mapping) or d.get("behavior") not in ("allow", "deny"):
        return
    if d["behavior"] == "allow":
        e.perm_decision = Decision.ALLOW
        if isinstance(d.get("updatedInput"), dict):
            e.updated_input = d["updatedInput"]
    else:
        e.perm_decision = Decision.DENY
        e.perm_message = _str_or_none(d.get("message"))
        e.perm_interrupt = d.get("interrupt") is True


# The fields of ``hookSpecificOutput`` each event reads, besides ``additionalContext``; the
# top-level ``reason`` is the fallback of PreToolUse's ``permissionDecisionReason``.
_SPECIFIC_OUTPUT: dict[str, Callable[[HandlerEffect, Mapping[str, Any], str | None], None]] = {
    "PreToolUse": _pre_tool_use_output,
    "PostToolUse": _post_tool_use_output,
    "PermissionRequest": _permission_request_output,
}
