"""The bridge from loaded settings (``config``) to a :class:`PermissionContext`.

``settings`` is read duck-typed (``rule_entries()``, ``default_mode``,
``additional_directories``, optionally ``merged.permissions.disableBypassPermissionsMode``) so
anything shaped like ``config.LoadedSettings`` works. Bad rules never stop start-up: each is
skipped or kept with a warning, and the warnings go back to the caller to show the user.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from permissions.domains import is_domain_rule
from permissions.engine import is_anchored_tool_glob
from permissions.params import PRIMARY_FIELDS, parse_param_rule
from permissions.rules import RuleSyntaxError, parse_rule
from permissions.types import (
    PermissionContext,
    PermissionMode,
    PermissionRule,
    RuleBehavior,
    RuleSource,
    RuleValue,
)

__all__ = ["KNOWN_TOOLS", "check_rule", "permission_context_from_settings", "rules_from_strings"]

KNOWN_TOOLS: frozenset[str] = frozenset(
    {
        "Agent",
        "AskUserQuestion",
        "Bash",
        "Cd",
        "Edit",
        "EnterPlanMode",
        "EnterWorktree",
        "ExitPlanMode",
        "ExitWorktree",
        "Glob",
        "Grep",
        "ListMcpResourcesTool",
        "LS",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "PowerShell",
        "Read",
        "ReadMcpResourceTool",
        "Skill",
        "SlashCommand",
        "TaskOutput",
        "TaskStop",
        "TodoWrite",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Write",
    }
)
# Tools whose rule content is a path written as Read(...) / Edit(...) instead.
_UNCONSULTED_PATH_TOOLS = frozenset({"Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"})
# Known tools whose rule content means something (a command, a path, a domain, a subject).
_CONTENT_TOOLS = (
    frozenset({"Bash", "PowerShell", "Read", "Edit", "WebFetch", "Agent", "Skill", "Cd"})
    | _UNCONSULTED_PATH_TOOLS
)
# Input fields (besides the primary ones) that make a ``name:value`` content a parameter rule.
_KNOWN_PARAMS: dict[str, frozenset[str]] = {
    "Bash": frozenset({"timeout", "description", "run_in_background", "dangerouslyDisableSandbox"}),
    "Agent": frozenset({"model", "subagent_type", "description", "prompt", "run_in_background"}),
}


def _is_param_shaped(value: RuleValue) -> str | None:
    """The parameter name if ``value`` is a parameter rule, else None."""
    content = value.content
    p = parse_param_rule(content)
    if p is None or content is None:
        return None
    if value.tool_name == "Bash" and content.rstrip().endswith(":*"):
        return None  # legacy prefix form
    if value.tool_name == "WebFetch" and is_domain_rule(content):
        return None
    if p.name in PRIMARY_FIELDS or p.name in _KNOWN_PARAMS.get(value.tool_name, ()):
        return p.name
    if value.tool_name not in KNOWN_TOOLS:
        return p.name  # MCP and unknown tools: only parameters can be matched
    return None


def check_rule(value: RuleValue, behavior: RuleBehavior) -> tuple[bool, list[str]]:
    """Whether to keep a rule, and the warnings it deserves."""
    name, warnings = value.tool_name, []
    if "*" in name and behavior is RuleBehavior.ALLOW and not is_anchored_tool_glob(name):
        return False, [
            f"allow rule {value} ignored: tool-name globs in allow rules must start "
            "with a literal mcp__<server>__ prefix"
        ]
    if (
        behavior is not RuleBehavior.ALLOW
        and name not in KNOWN_TOOLS
        and "_" not in name
        and "*" not in name
    ):
        warnings.append(f"{behavior.value} rule {value}: unknown tool name {name!r}")
    param = _is_param_shaped(value)
    if param is not None:
        if param in PRIMARY_FIELDS:
            return False, [
                f"{behavior.value} rule {value} ignored: {param!r} is the tool's "
                "primary field; write the rule on the field's own form instead"
            ]
        if behavior is RuleBehavior.ALLOW:
            return False, [f"allow rule {value} ignored: parameter rules are deny/ask only"]
    elif value.content is not None and name in KNOWN_TOOLS and name not in _CONTENT_TOOLS:
        warnings.append(
            f"{behavior.value} rule {value}: {name} rules take no content other "
            "than parameters (param:value); this one never matches"
        )
    elif value.content is not None and name in _UNCONSULTED_PATH_TOOLS:
        warnings.append(
            f"{behavior.value} rule {value}: path rules are written Read(...) or "
            "Edit(...); this one is not consulted for allowing"
        )
    return True, warnings


def rules_from_strings(
    texts: Iterable[str], behavior: RuleBehavior, source: RuleSource, base_dir: Path | None
) -> tuple[list[PermissionRule], list[str]]:
    """Parse and check rule strings (from flags or a file); bad ones become warnings."""
    rules, warnings = [], []
    for text in texts:
        try:
            value = parse_rule(text)
        except RuleSyntaxError as exc:
            warnings.append(f"{source.value}: {exc}; rule skipped")
            continue
        keep, found = check_rule(value, behavior)
        warnings += [f"{source.value}: {w}" for w in found]
        if keep:
            rules.append(PermissionRule(source, behavior, value, base_dir))
    return rules, warnings


def _bypass_disabled(settings: Any) -> bool:
    perms = getattr(getattr(settings, "merged", None), "permissions", None)
    return getattr(perms, "disableBypassPermissionsMode", None) == "disable"


def permission_context_from_settings(
    settings: Any,
    *,
    cwd: Path,
    mode: PermissionMode | None = None,
    extra_rules: Iterable[PermissionRule] = (),
    additional_dirs: Iterable[Path] = (),
    bypass_available: bool = False,
    home: Path | None = None,
) -> tuple[PermissionContext, list[str]]:
    """Build the permission context of a session from loaded settings; returns (ctx, warnings).

    Rule order is the settings' order (highest precedence first), then ``extra_rules``; the
    engine's deny > ask > allow makes the order matter only for which rule a verdict names.
    """
    warnings: list[str] = []
    rules: list[PermissionRule] = []
    for entry in settings.rule_entries():
        try:
            source = RuleSource(entry.source)
        except ValueError:
            warnings.append(f"rule {entry.rule!r} has an unknown source {entry.source!r}")
            source = RuleSource.SESSION
        try:
            behavior = RuleBehavior(entry.behavior)
        except ValueError:
            warnings.append(f"{source.value}: unknown rule behaviour {entry.behavior!r}; skipped")
            continue
        found, more = rules_from_strings([entry.rule], behavior, source, entry.base_dir)
        rules += found
        warnings += more
    rules += list(extra_rules)

    bypass_ok = bypass_available and not _bypass_disabled(settings)
    chosen = mode
    if chosen is None and settings.default_mode:
        try:
            chosen = PermissionMode.parse(settings.default_mode)
        except ValueError as exc:
            warnings.append(f"permissions.defaultMode: {exc}; using default")
        if chosen is PermissionMode.BYPASS:
            bypass_ok = not _bypass_disabled(settings)
    if chosen is PermissionMode.BYPASS:
        if _bypass_disabled(settings):
            warnings.append("bypassPermissions mode is disabled by settings; using default")
            chosen = PermissionMode.DEFAULT
        else:
            bypass_ok = True

    dirs: list[Path] = []
    for d in [*getattr(settings, "additional_directories", []), *additional_dirs]:
        p = Path(os.path.normpath(cwd / Path(d).expanduser()))
        if p != cwd and p not in dirs:
            dirs.append(p)
    ctx = PermissionContext(
        mode=chosen or PermissionMode.DEFAULT,
        rules=tuple(rules),
        cwd=cwd,
        additional_dirs=tuple(dirs),
        bypass_available=bypass_ok,
        home=home or Path.home(),
    )
    return ctx, warnings
