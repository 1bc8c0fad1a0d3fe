"""Pipeline steps 8–9: resolve the permission, handle a denial.

Resolution chain: a PreToolUse hook's deny is final. Otherwise the engine judges the backfilled
input (rules deny > ask > allow, the tool's own check, mode defaults, safety checks). A hook's
allow lifts only an ask that came from the mode's default — never a deny or ask rule, never a
safety check. What still asks goes, in order, to the auto-mode classifier (for what a classifier
may approve), a PermissionRequest hook, and the user's prompt.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

from permissions.types import (
    Decision,
    PermissionMode,
    PermissionRequest,
    PermissionRule,
    ReasonKind,
    RuleBehavior,
    RuleSource,
    RuleValue,
    ToolKind,
    Verdict,
)
from tools.context import PermissionAnswer, PermissionPrompt, ToolUseContext
from tools.errors import PermissionDeniedError
from tools.messages import system_reminder
from tools.pipeline.types import CallState, until_abort
from tools.pipeline.validate import replace_input
from tools.terminal_text import reveal

__all__ = [
    "REJECT_MESSAGE",
    "REJECT_WITH_FEEDBACK",
    "build_request",
    "denial_message",
    "handle_denial",
    "resolve_permission",
    "session_rules_modifier",
    "suggestion_updates",
]

REJECT_MESSAGE = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)
REJECT_WITH_FEEDBACK = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). To tell you how to proceed, "
    "the user said:\n"
)
# Asks a PreToolUse hook's allow may lift: the mode's default caution, not an explicit rule.
_HOOK_LIFTABLE = frozenset(
    {
        ReasonKind.MODE,
        ReasonKind.DEFAULT,
        ReasonKind.READ_ONLY,
        ReasonKind.WORKING_DIR,
        ReasonKind.ANALYSIS,
        ReasonKind.TOOL,
        ReasonKind.CLASSIFIER,  # auto mode's default: "the classifier reviews it"
    }
)


def _decide(request: PermissionRequest, ctx: ToolUseContext) -> Verdict:
    # Imported on use: the engine is a sibling layer's module and may import heavy analysis.
    from permissions.engine import decide

    verdict: Verdict = decide(request, ctx.permissions)
    return verdict


_RAW_PATH_FIELDS = ("file_path", "notebook_path", "path")


def _raw_path_trick(state: CallState, tool_verdict: Verdict | None) -> Verdict | None:
    """The tool's verdict, or an ASK for a path trick in the path *as the model wrote it*.

    Backfill normalises the path (``/p/src/../../etc/x`` -> ``/etc/x``) before the engine sees
    it, so its ``..``-escape check would never fire; the parsed input still has the raw text.
    """
    if tool_verdict is not None and tool_verdict.decision is Decision.DENY:
        return tool_verdict
    from permissions.safety import check_path_tricks

    for name in _RAW_PATH_FIELDS:
        raw = getattr(state.parsed, name, None)
        if isinstance(raw, str) and (check := check_path_tricks(raw, state.ctx.permissions)):
            return Verdict(
                Decision.ASK, f"safety check: {check.message}", ReasonKind.SAFETY, safety=check
            )
    return tool_verdict


async def build_request(state: CallState) -> PermissionRequest:
    """The call as the engine sees it: backfilled input, paths, subject, traits, tool verdict."""
    tool, ctx, inp = state.tool, state.ctx, state.backfilled
    assert tool is not None
    command = getattr(inp, "command", None)
    url = getattr(inp, "url", None)
    paths = tuple(tool.permission_paths(inp, ctx))
    verdict = _raw_path_trick(state, await tool.check_permissions(inp, ctx))
    return PermissionRequest(
        tool_name=tool.name,
        input=dict(state.hook_input()),
        kind=tool.permission_kind,
        paths=paths,
        command=command if isinstance(command, str) else None,
        url=url if isinstance(url, str) else None,
        is_read_only=bool(tool.is_read_only(inp)),
        is_mcp=tool.is_mcp,
        tool_verdict=_sandbox_boundary(state, paths) or verdict,
        sandboxed=_sandbox_confines(state, command),
    )


def _sandbox_boundary(state: CallState, paths: tuple[Any, ...]) -> Verdict | None:
    """A write the OS sandbox would refuse is refused to the file tools too."""
    tool, ctx = state.tool, state.ctx
    if tool is None or tool.is_mcp or tool.permission_kind is not ToolKind.EDIT:
        return None
    from tools.sandbox import get_sandbox, write_verdict

    return write_verdict(get_sandbox(ctx), paths, ctx.permissions.working_dirs)


def _sandbox_confines(state: CallState, command: object) -> bool:
    """Bash confined by a working OS sandbox that auto-allows (``tools.sandbox.policy``)."""
    tool = state.tool
    if tool is None or tool.is_mcp or tool.permission_kind is not ToolKind.BASH:
        return False
    from tools.sandbox import bash_auto_allowed, get_sandbox

    disable = getattr(state.backfilled, "dangerouslyDisableSandbox", False) is True
    return isinstance(command, str) and bash_auto_allowed(get_sandbox(state.ctx), command, disable)


def _hook_liftable(verdict: Verdict) -> bool:
    if verdict.safety is not None or verdict.kind not in _HOOK_LIFTABLE:
        return False
    return verdict.rule is None or verdict.rule.behavior is RuleBehavior.ALLOW


def _classifier_approvable(verdict: Verdict) -> bool:
    if verdict.safety is not None and not verdict.safety.classifier_approvable:
        return False
    # An explicit ask rule is the user's wish to be asked.
    return verdict.rule is None or verdict.rule.behavior is not RuleBehavior.ASK


def suggestion_updates(rules: Sequence[RuleValue]) -> list[dict[str, Any]]:
    """The engine's "don't ask again" rules as Claude Code's ``permission_suggestions``: one
    session ``addRules`` update each (``ruleContent`` left out for a whole-tool rule)."""
    updates: list[dict[str, Any]] = []
    for rule in rules:
        value: dict[str, Any] = {"toolName": rule.tool_name}
        if rule.content is not None:
            value["ruleContent"] = rule.content
        updates.append(
            {"type": "addRules", "rules": [value], "behavior": "allow", "destination": "session"}
        )
    return updates


def session_rules_modifier(rules: tuple[RuleValue, ...]) -> Any:
    """A context modifier adding ``rules`` as session allow rules (after "always allow")."""
    added = tuple(PermissionRule(RuleSource.SESSION, RuleBehavior.ALLOW, r) for r in rules)

    def add_session_rules(ctx: ToolUseContext) -> ToolUseContext:
        perms = dataclasses.replace(ctx.permissions, rules=(*ctx.permissions.rules, *added))
        return dataclasses.replace(ctx, permissions=perms)

    return add_session_rules


async def resolve_permission(state: CallState) -> None:
    """8. Hook deny is final; else the engine; a hook allow lifts mode asks; then ask someone."""
    hook = state.pre_hook
    if hook is not None and (hook.decision is Decision.DENY or hook.blocked):
        reason = hook.decision_reason or hook.block_reason or "denied by a PreToolUse hook"
        state.verdict = Verdict(Decision.DENY, reason, ReasonKind.HOOK)
        return
    request = await build_request(state)
    verdict = _decide(request, state.ctx)
    if hook is not None and hook.decision is Decision.ALLOW:
        if verdict.decision is Decision.ASK and _hook_liftable(verdict):
            reason = hook.decision_reason or "allowed by a PreToolUse hook"
            verdict = Verdict(
                Decision.ALLOW, reason, ReasonKind.HOOK, trace=(*verdict.trace, reason)
            )
    elif hook is not None and hook.decision is Decision.ASK and verdict.allowed:
        reason = hook.decision_reason or "a PreToolUse hook asked for confirmation"
        verdict = Verdict(Decision.ASK, reason, ReasonKind.HOOK, trace=(*verdict.trace, reason))
    if verdict.decision is Decision.ASK:
        verdict = await _resolve_ask(state, verdict)
    state.verdict = verdict


async def _classifier_verdict(state: CallState) -> Verdict | None:
    task = state.classifier_task
    if task is None:
        return None
    if state.input_updated:
        # The speculative verdict judged the input the model sent; a hook (or the user) changed
        # it since, so the classifier must judge what will actually run.
        task.cancel()
        classifier = state.ctx.options.services.classifier
        if classifier is None or state.tool is None:
            return None
        task = asyncio.ensure_future(
            classifier.classify(state.tool.name, state.hook_input(), state.ctx)
        )
        state.classifier_task = task
    try:
        verdict = await until_abort(task, state.ctx.abort)
    except Exception:
        return None  # a broken classifier has no opinion; the user is asked instead
    if verdict is None or verdict.decision is Decision.ASK:
        return None
    return dataclasses.replace(verdict, kind=ReasonKind.CLASSIFIER)


async def _resolve_ask(state: CallState, verdict: Verdict) -> Verdict:
    ctx, tool = state.ctx, state.tool
    assert tool is not None
    mode = ctx.permissions.mode
    if mode is PermissionMode.DONT_ASK:
        return Verdict(Decision.DENY, f"dontAsk mode: {verdict.reason}", verdict.kind, verdict.rule)
    hook_asked = state.pre_hook is not None and state.pre_hook.decision is Decision.ASK
    # A PreToolUse hook's "ask" forces a human prompt: no classifier may answer it.
    if mode is PermissionMode.AUTO and _classifier_approvable(verdict) and not hook_asked:
        decided = await _classifier_verdict(state)
        if decided is not None:
            return decided
    if ctx.hooks is not None:
        answered = await _permission_request_hook(state, verdict)
        if answered is not None:
            return answered
    preview, approved_input = None, None
    if tool.prepare_prompt is not None:
        preview, approved_input = await tool.prepare_prompt(state.parsed, ctx)
    try:
        title = tool.describe_call(state.parsed)
    except Exception:
        title = tool.name
    prompt = PermissionPrompt(
        tool_name=tool.name,
        tool_use_id=state.call.id,
        input=state.hook_input(),
        verdict=verdict,
        title=title,
        preview=preview,
        agent_id=ctx.agent.agent_id,
    )
    response = await until_abort(ctx.callbacks.request_permission(prompt), ctx.abort)
    state.user_decided = True
    if response.answer is PermissionAnswer.DENY:
        state.denial_feedback = (response.feedback or "").strip() or None
        return Verdict(Decision.DENY, state.denial_feedback or "the user declined", ReasonKind.USER)
    if approved_input is not None:
        # What the user saw in the preview is exactly what runs (e.g. a simulated sed edit).
        state.set_input(approved_input, tool.backfill_input(approved_input, ctx))
        state.input_updated = True
    if response.updated_input is not None:
        await replace_input(state, response.updated_input, source="The permission prompt")
    if response.answer is PermissionAnswer.ALLOW_ALWAYS:
        rules = tuple(response.rules) or verdict.suggestions
        if rules:
            state.rules_to_persist = rules
            state.modifiers.append(session_rules_modifier(rules))
    return Verdict(Decision.ALLOW, "approved by the user", ReasonKind.USER, trace=verdict.trace)


async def _permission_request_hook(state: CallState, verdict: Verdict) -> Verdict | None:
    assert state.tool is not None and state.ctx.hooks is not None
    suggestions = suggestion_updates(verdict.suggestions)
    out = await until_abort(
        state.ctx.hooks.permission_request(
            tool_name=state.tool.name,
            tool_input=state.hook_input(),
            permission_mode=state.ctx.permissions.mode.value,
            suggestions=suggestions,
        ),
        state.ctx.abort,
    )
    for text in out.additional_context:
        state.pre_messages.append(system_reminder(f"PermissionRequest hook: {text}"))
    if out.decision is Decision.ALLOW:
        if out.updated_input is not None:
            await replace_input(state, out.updated_input, source="PermissionRequest hook")
        return Verdict(
            Decision.ALLOW, out.message or "allowed by a PermissionRequest hook", ReasonKind.HOOK
        )
    if out.decision is Decision.DENY:
        if out.interrupt:
            state.stop(out.message or "interrupted by a PermissionRequest hook")
        return Verdict(
            Decision.DENY, out.message or "denied by a PermissionRequest hook", ReasonKind.HOOK
        )
    return None


def _subject(state: CallState) -> str:
    inp, tool = state.backfilled, state.tool
    command = getattr(inp, "command", None)
    if tool is not None and tool.permission_kind is ToolKind.BASH and isinstance(command, str):
        return f' with command "{reveal(command)}"'
    url = getattr(inp, "url", None)
    if isinstance(url, str):
        return f" for {url}"
    if tool is not None:
        try:
            paths = tool.permission_paths(inp, state.ctx)
        except Exception:
            paths = ()
        if paths:
            return " on " + ", ".join(str(p) for p in paths)
    return ""


def denial_message(state: CallState) -> str:
    """What the model reads: the user's words, or the rule and its source, or the reason."""
    verdict = state.verdict
    assert verdict is not None
    if verdict.kind is ReasonKind.USER:
        if state.denial_feedback:
            return REJECT_WITH_FEEDBACK + state.denial_feedback
        return REJECT_MESSAGE
    head = f"Permission to use {state.tool_name}{_subject(state)} has been denied"
    rule = verdict.rule
    if rule is not None and rule.behavior is RuleBehavior.DENY:
        return f"{head} by the deny rule {rule.value} from {rule.source.value}."
    return f"{head}: {verdict.reason.rstrip('.')}."


async def handle_denial(state: CallState) -> None:
    """9. A denial becomes the model's message; PermissionDenied hooks run for classifier denials.

    As in Claude Code, PermissionDenied is the auto-mode classifier's event: a rule, a mode or
    the user saying no is not reported through it.
    """
    verdict = state.verdict
    if verdict is None:
        # Fail closed: a call with no verdict never runs.
        state.verdict = verdict = Verdict(Decision.DENY, "no permission decision was made")
    if verdict.decision is Decision.ALLOW:
        return
    if verdict.decision is Decision.ASK:
        state.verdict = verdict = Verdict(Decision.DENY, verdict.reason, verdict.kind, verdict.rule)
    message = denial_message(state)
    hooks = state.ctx.hooks
    if hooks is not None and verdict.kind is ReasonKind.CLASSIFIER:
        out = await until_abort(
            hooks.permission_denied(
                tool_name=state.tool_name,
                tool_input=state.hook_input(),
                tool_use_id=state.call.id,
                reason=verdict.reason,
            ),
            state.ctx.abort,
        )
        for text in out.additional_context:
            state.pre_messages.append(system_reminder(f"PermissionDenied hook: {text}"))
    raise PermissionDeniedError(message)
