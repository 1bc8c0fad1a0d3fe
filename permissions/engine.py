"""The decision engine: one call, one context, one explained verdict.

Order (the strictest outcome wins, ALLOW < ASK < DENY):

1. deny rules (tool-name, parameter and content rules) -> DENY; a DENY from the tool's own check
   is just as final;
2. ask rules -> ASK (kind RULE), even in bypassPermissions and auto;
3. safety checks (protected paths, path tricks);
   then a Bash call confined by a working OS sandbox with ``autoAllowBashIfSandboxed`` -> ALLOW
   (an allow rule's verdict if one matches), except in plan mode;
   then bash analysis that cannot model the command -> ASK;
4. an ASK from the tool's own check;
5. allow rules and read-only calls -> ALLOW;
6. whatever still needs permission goes to the mode (:mod:`permissions.modes`).

``decide`` runs the tool-level deny rules and the content matcher of the request's kind, then
the steps of ``_STEPS`` in this order (the first verdict stands), then the mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from permissions.domains import domain_rule_matches, is_domain_rule, url_host
from permissions.modes import Pending, apply_mode
from permissions.params import (
    glob_match,
    param_rule_matches,
    parse_param_rule,
    specifier_matches,
)
from permissions.paths import expand_path, first_matching_path_rule
from permissions.rules import canonical_tool_name
from permissions.safety import check_path_tricks, check_write_path, is_inside_working_dirs
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    PermissionRule,
    ReasonKind,
    RuleBehavior,
    RuleValue,
    SafetyCheck,
    ToolKind,
    Verdict,
)

if TYPE_CHECKING:
    from permissions.bash.types import BashAssessment

__all__ = ["decide", "is_anchored_tool_glob", "tool_name_matches"]

_RAW_PATH_FIELDS = ("file_path", "notebook_path", "path")


def is_anchored_tool_glob(name: str) -> bool:
    """A tool-name glob allowed in allow rules: a literal ``mcp__<server>__`` before any ``*``."""
    prefix = name.split("*", 1)[0]
    return prefix.startswith("mcp__") and prefix.find("__", 5) > 5


def tool_name_matches(rule: PermissionRule, request: PermissionRequest) -> bool:
    """Does the rule's tool name cover this call (ignoring the rule's content)?

    ``Edit`` covers every editing tool, ``Read`` every reading tool (and, as a deny, editing
    too: what may not be read may not be written); ``mcp__srv`` covers the server's tools.
    """
    rname = rule.value.tool_name
    name = canonical_tool_name(request.tool_name)
    if rname == name:
        return True
    if not request.is_mcp:
        if rname == "Edit" and request.kind is ToolKind.EDIT:
            return True
        if rname == "Read" and (
            request.kind is ToolKind.READ
            or (request.kind is ToolKind.EDIT and rule.behavior is RuleBehavior.DENY)
        ):
            return True
    if "*" in rname:
        if rule.behavior is RuleBehavior.ALLOW and not is_anchored_tool_glob(rname):
            return False
        return glob_match(rname, name)
    return rname.startswith("mcp__") and rname.count("__") == 1 and name.startswith(rname + "__")


@dataclass(slots=True)
class _Outcome:
    """What the content matcher of one request kind found."""

    deny: Verdict | None = None
    ask: Verdict | None = None
    safety: Verdict | None = None  # ASK carrying a SafetyCheck
    uncertain: Verdict | None = None  # ASK: the bash analysis cannot model the command
    allow: Verdict | None = None
    needs: Verdict | None = None
    accept_edits_ok: bool = False
    read_only: bool = False
    trace: list[str] = field(default_factory=list)


# rule behaviours in the order they are tried, with the verdict and _Outcome slot each fills
_SLOTS: tuple[tuple[RuleBehavior, Decision, str], ...] = (
    (RuleBehavior.DENY, Decision.DENY, "deny"),
    (RuleBehavior.ASK, Decision.ASK, "ask"),
    (RuleBehavior.ALLOW, Decision.ALLOW, "allow"),
)


def _rule_verdict(decision: Decision, rule: PermissionRule, what: str = "") -> Verdict:
    tail = f" ({what})" if what else ""
    return Verdict(decision, f"{rule.describe()}{tail}", ReasonKind.RULE, rule)


def _rules(
    ctx: PermissionContext,
    request: PermissionRequest,
    behavior: RuleBehavior,
    tool: str | None = None,
) -> list[PermissionRule]:
    """Content rules of ``behavior`` for the tool named ``tool`` (or covering the request)."""
    out = []
    for r in ctx.rules:
        if r.behavior is not behavior or r.value.content is None:
            continue
        if (r.value.tool_name == tool) if tool else tool_name_matches(r, request):
            out.append(r)
    return out


def _raw_paths(request: PermissionRequest) -> list[str]:
    raws = [v for k in _RAW_PATH_FIELDS if isinstance(v := request.input.get(k), str)]
    return raws + [str(p) for p in request.paths]


def _safety_verdict(check: SafetyCheck) -> Verdict:
    return Verdict(Decision.ASK, f"safety check: {check.message}", ReasonKind.SAFETY, safety=check)


def _tricks(request: PermissionRequest, ctx: PermissionContext, out: _Outcome) -> None:
    for raw in _raw_paths(request):
        check = check_path_tricks(raw, ctx)
        if check is not None:
            out.safety = _safety_verdict(check)
            return


def _paths(request: PermissionRequest, ctx: PermissionContext) -> tuple[Path, ...]:
    return tuple(expand_path(p, ctx) for p in request.paths) or (ctx.cwd,)


def _first_path_rule(
    rules: list[PermissionRule], paths: tuple[Path, ...], ctx: PermissionContext
) -> tuple[PermissionRule, Path] | None:
    for p in paths:
        rule = first_matching_path_rule(rules, p, ctx)
        if rule is not None:
            return rule, p
    return None


def _read(request: PermissionRequest, ctx: PermissionContext) -> _Outcome:
    out = _Outcome(read_only=request.is_read_only)
    paths = _paths(request, ctx)
    for behavior, decision, slot in _SLOTS[:2]:  # allow rules need every path, below
        hit = _first_path_rule(_rules(ctx, request, behavior, "Read"), paths, ctx)
        if hit:
            setattr(out, slot, _rule_verdict(decision, hit[0], f"path {hit[1]}"))
            return out
    _tricks(request, ctx, out)
    allows = _rules(ctx, request, RuleBehavior.ALLOW, "Read")
    outside = []
    rule_used = None
    for p in paths:
        r = first_matching_path_rule(allows, p, ctx)
        if r is not None:
            rule_used = rule_used or r
        elif not (request.is_read_only and is_inside_working_dirs(p, ctx)):
            outside.append(p)
    if not outside:
        out.allow = (
            _rule_verdict(Decision.ALLOW, rule_used)
            if rule_used and len(paths) == 1
            else Verdict(
                Decision.ALLOW,
                "reading inside the working directories",
                ReasonKind.WORKING_DIR,
                rule_used,
            )
        )
        return out
    p = outside[0]
    folder = p if p.is_dir() else p.parent
    where = "outside the working directories" if request.is_read_only else "(not read-only)"
    out.needs = Verdict(
        Decision.ASK,
        f"reading {p} {where} needs permission",
        ReasonKind.WORKING_DIR,
        suggestions=(RuleValue("Read", f"/{folder}/**".replace("///", "//")),),
    )
    return out


def _edit(request: PermissionRequest, ctx: PermissionContext) -> _Outcome:
    out = _Outcome()
    paths = _paths(request, ctx)
    hit = _first_path_rule(_rules(ctx, request, RuleBehavior.DENY), paths, ctx)
    if hit:
        out.deny = _rule_verdict(Decision.DENY, hit[0], f"path {hit[1]}")
        return out
    hit = _first_path_rule(_rules(ctx, request, RuleBehavior.ASK, "Edit"), paths, ctx)
    if hit:
        out.ask = _rule_verdict(Decision.ASK, hit[0], f"path {hit[1]}")
        return out
    _tricks(request, ctx, out)
    if out.safety is None:
        checks = [c for p in paths if (c := check_write_path(p, ctx)) is not None]
        if checks:
            out.safety = _safety_verdict(min(checks, key=lambda c: c.classifier_approvable))
    allows = _rules(ctx, request, RuleBehavior.ALLOW, "Edit")
    rules = [first_matching_path_rule(allows, p, ctx) for p in paths]
    if all(rules):
        out.allow = _rule_verdict(Decision.ALLOW, rules[0])  # type: ignore[arg-type]
        return out
    outside = [p for p in paths if not is_inside_working_dirs(p, ctx)]
    out.accept_edits_ok = not outside and out.safety is None
    if outside:
        out.needs = Verdict(
            Decision.ASK,
            f"editing {outside[0]} outside the working directories needs permission",
            ReasonKind.WORKING_DIR,
        )
    else:
        out.needs = Verdict(
            Decision.ASK, f"{request.tool_name} of {paths[0]} needs permission", ReasonKind.MODE
        )
    return out


def _fetch(request: PermissionRequest, ctx: PermissionContext) -> _Outcome:
    out = _Outcome(read_only=request.is_read_only)
    url = request.url or str(request.input.get("url", ""))
    for behavior, decision, slot in _SLOTS:
        for r in _rules(ctx, request, behavior, "WebFetch"):
            if not _is_param_rule(r, request) and domain_rule_matches(r.value.content, url):
                setattr(out, slot, _rule_verdict(decision, r, url))
                return out
    host = url_host(url)
    sugg = (RuleValue("WebFetch", f"domain:{host}"),) if host else ()
    out.needs = Verdict(
        Decision.ASK,
        f"fetching {url or '(no URL)'} needs permission",
        ReasonKind.MODE,
        suggestions=sugg,
    )
    return out


def _generic(request: PermissionRequest, ctx: PermissionContext) -> _Outcome:
    out = _Outcome(read_only=request.is_read_only)
    name = canonical_tool_name(request.tool_name)
    for behavior, decision, slot in _SLOTS:
        for r in _rules(ctx, request, behavior, name):
            if _is_param_rule(r, request):
                continue  # parameter rules are judged at the tool level (deny/ask only)
            if specifier_matches(name, r.value.content or "", request.input):
                setattr(out, slot, _rule_verdict(decision, r))
                return out
    if request.is_read_only and not request.is_mcp and request.kind is not ToolKind.NETWORK:
        # MCP read-only hints come from the server and are not trusted; a network call is
        # read-only here but sends its input away, so it asks like any other.
        out.allow = Verdict(Decision.ALLOW, f"{name} is read-only", ReasonKind.READ_ONLY)
        return out
    out.needs = Verdict(
        Decision.ASK, f"{name} needs permission", ReasonKind.MODE, suggestions=(RuleValue(name),)
    )
    return out


_assess_bash: Callable[[str, PermissionContext], BashAssessment] | None = None


def _bash(request: PermissionRequest, ctx: PermissionContext) -> _Outcome:
    global _assess_bash
    if _assess_bash is None:  # imported on first use: tree-sitter loads only when bash is judged
        from permissions.bash import assess_bash

        _assess_bash = assess_bash
    command = request.command if request.command is not None else request.input.get("command")
    if not isinstance(command, str):
        return _Outcome(
            uncertain=Verdict(
                Decision.ASK, "Bash call without a command string", ReasonKind.ANALYSIS
            )
        )
    a = _assess_bash(command, ctx)
    out = _Outcome(read_only=a.read_only, accept_edits_ok=a.accept_edits_ok)
    v = a.verdict
    # the analysis' own trace (per subcommand) goes under the engine's header, once
    lines = v.trace or tuple(f"`{s.text}`: {s.judgement}" for s in a.subcommands)
    out.trace = [f"  {line}" for line in lines]
    # the constructor, not dataclasses.replace: this runs on every bash decision
    v = Verdict(v.decision, v.reason, v.kind, v.rule, v.safety, v.suggestions)
    if v.decision is Decision.DENY:
        out.deny = v
    elif v.decision is Decision.ALLOW:
        out.allow = v
    elif v.safety is not None:
        out.safety = v
    elif v.kind is ReasonKind.RULE:
        out.ask = v
    elif v.kind is ReasonKind.ANALYSIS:
        out.uncertain = v
    else:
        out.needs = v
    return out


_HANDLERS: dict[ToolKind, Callable[[PermissionRequest, PermissionContext], _Outcome]] = {
    ToolKind.READ: _read,
    ToolKind.EDIT: _edit,
    ToolKind.FETCH: _fetch,
    ToolKind.GENERIC: _generic,
    ToolKind.NETWORK: _generic,
    ToolKind.BASH: _bash,
}


def _is_param_rule(rule: PermissionRule, request: PermissionRequest) -> bool:
    p = parse_param_rule(rule.value.content)
    if p is None or p.name not in request.input:
        return False
    content = rule.value.content or ""
    if request.kind is ToolKind.BASH and content.rstrip().endswith(":*"):
        return False  # the legacy Bash prefix form `git:*`, not a parameter
    return not (request.kind is ToolKind.FETCH and is_domain_rule(content))


def _tool_level(
    request: PermissionRequest, ctx: PermissionContext, behavior: RuleBehavior
) -> PermissionRule | None:
    """A bare tool-name rule or a (deny/ask) parameter rule of ``behavior`` covering the call."""
    for r in ctx.rules:
        if r.behavior is not behavior or not tool_name_matches(r, request):
            continue
        if r.value.content is None:
            return r
        if behavior is not RuleBehavior.ALLOW and _is_param_rule(r, request):
            p = parse_param_rule(r.value.content)
            if p is not None and param_rule_matches(p, request.input):
                return r
    return None


def _done(v: Verdict, trace: list[str], line: str | None = None) -> Verdict:
    return v.with_trace(*trace, line) if line else v.with_trace(*trace)


def _tool_denial(
    request: PermissionRequest, ctx: PermissionContext, out: _Outcome, trace: list[str]
) -> Verdict | None:
    """Step 1: a deny from the content rules, or from the tool's own check."""
    if out.deny is not None:
        return _done(out.deny, trace, f"deny: {out.deny.reason}")
    tool = request.tool_verdict
    if tool is not None and tool.decision is Decision.DENY:
        return _done(
            replace(tool, kind=ReasonKind.TOOL), trace, f"tool check denies: {tool.reason}"
        )
    return None


def _ask_rule(
    request: PermissionRequest, ctx: PermissionContext, out: _Outcome, trace: list[str]
) -> Verdict | None:
    """Step 2: an ask rule (tool-level first, then the content rules), for a human only."""
    ask = _tool_level(request, ctx, RuleBehavior.ASK)
    ask_v = _rule_verdict(Decision.ASK, ask) if ask is not None else out.ask
    if ask_v is None:
        return None
    trace.append(f"ask: {ask_v.reason}")
    return _done(
        apply_mode(Pending(ask_v, human_only=True, read_only=out.read_only), ctx.mode), trace
    )


def _safety_check(
    request: PermissionRequest, ctx: PermissionContext, out: _Outcome, trace: list[str]
) -> Verdict | None:
    """Step 3: a safety check of the content matcher, else of the tool's own check."""
    safety = out.safety
    tool = request.tool_verdict
    if safety is None and tool is not None and tool.decision is Decision.ASK and tool.safety:
        safety = replace(tool, kind=ReasonKind.SAFETY)
    if safety is None or safety.safety is None:
        return None
    trace.append(safety.reason)
    hard = not safety.safety.classifier_approvable
    return _done(
        apply_mode(Pending(safety, human_only=hard, read_only=out.read_only), ctx.mode), trace
    )


def _sandboxed(
    request: PermissionRequest, ctx: PermissionContext, out: _Outcome, trace: list[str]
) -> Verdict | None:
    """Step 3, then: a call confined by the OS sandbox is allowed, except in plan mode."""
    if not request.sandboxed or ctx.mode is PermissionMode.PLAN:
        return None
    confined = out.allow or Verdict(
        Decision.ALLOW,
        "runs in the OS sandbox (sandbox.autoAllowBashIfSandboxed)",
        ReasonKind.SANDBOX,
    )
    return _done(confined, trace, f"allow: {confined.reason}")


def _uncertain(
    request: PermissionRequest, ctx: PermissionContext, out: _Outcome, trace: list[str]
) -> Verdict | None:
    """Step 3, last: a bash command the analysis cannot model goes to the mode (not read-only)."""
    if out.uncertain is None:
        return None
    trace.append(f"analysis: {out.uncertain.reason}")
    return _done(apply_mode(Pending(out.uncertain, read_only=False), ctx.mode), trace)


def _tool_ask(
    request: PermissionRequest, ctx: PermissionContext, out: _Outcome, trace: list[str]
) -> Verdict | None:
    """Step 4: an ASK from the tool's own check goes to the mode."""
    tool = request.tool_verdict
    if tool is None or tool.decision is not Decision.ASK:
        return None
    trace.append(f"tool check asks: {tool.reason}")
    pending = Pending(
        replace(tool, kind=ReasonKind.TOOL),
        accept_edits_ok=out.accept_edits_ok,
        read_only=out.read_only,
    )
    return _done(apply_mode(pending, ctx.mode), trace)


def _allowed(
    request: PermissionRequest, ctx: PermissionContext, out: _Outcome, trace: list[str]
) -> Verdict | None:
    """Step 5: an allow from the content matcher, a tool-level allow rule or the tool's check."""
    allow = out.allow
    if allow is None:
        rule = _tool_level(request, ctx, RuleBehavior.ALLOW)
        if rule is not None:
            allow = _rule_verdict(Decision.ALLOW, rule)
    tool = request.tool_verdict
    if allow is None and tool is not None and tool.decision is Decision.ALLOW:
        allow = replace(tool, kind=ReasonKind.TOOL)
    if allow is None:
        return None
    return _done(allow, trace, f"allow: {allow.reason}")


# The steps after the content matcher ran, strictest first: the first verdict stands.
_Step = Callable[[PermissionRequest, PermissionContext, _Outcome, list[str]], Verdict | None]
_STEPS: tuple[_Step, ...] = (
    _tool_denial,
    _ask_rule,
    _safety_check,
    _sandboxed,
    _uncertain,
    _tool_ask,
    _allowed,
)


def decide(request: PermissionRequest, ctx: PermissionContext) -> Verdict:
    """Judge one call under ``ctx`` (rules, mode, working dirs). Pure apart from path lookups."""
    trace: list[str] = [f"{request.tool_name} ({request.kind.value}) in {ctx.mode.value} mode"]
    deny = _tool_level(request, ctx, RuleBehavior.DENY)
    if deny is not None:
        return _done(_rule_verdict(Decision.DENY, deny), trace, f"deny: {deny.describe()}")
    out = _HANDLERS[request.kind](request, ctx)
    trace += out.trace
    for step in _STEPS:
        verdict = step(request, ctx, out, trace)
        if verdict is not None:
            return verdict
    needs = out.needs or Verdict(
        Decision.ASK, f"{request.tool_name} needs permission", ReasonKind.MODE
    )
    verdict = apply_mode(
        Pending(needs, accept_edits_ok=out.accept_edits_ok, read_only=out.read_only), ctx.mode
    )
    return _done(verdict, trace, f"mode {ctx.mode.value}: {verdict.decision.label}")
