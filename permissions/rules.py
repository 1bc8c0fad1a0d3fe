"""The rule grammar: ``Tool`` or ``Tool(content)``; legacy tool-name aliases.

Only parsing and naming live here; matching a rule's content against a call is done by the
matcher of the tool's kind (bash analysis, path rules, domains, parameters).
"""

from __future__ import annotations

from pathlib import Path

from permissions.types import PermissionRule, RuleBehavior, RuleSource, RuleValue

__all__ = [
    "LEGACY_TOOL_ALIASES",
    "RuleSyntaxError",
    "canonical_tool_name",
    "make_rule",
    "parse_rule",
]

# Old names users still have in their files and transcripts.
LEGACY_TOOL_ALIASES: dict[str, str] = {
    "Task": "Agent",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
    "BashOutput": "TaskOutput",
    "AgentOutputTool": "TaskOutput",
    "ListMcpResources": "ListMcpResourcesTool",
}


class RuleSyntaxError(ValueError):
    """A rule string that does not follow ``Tool`` / ``Tool(content)``."""


def canonical_tool_name(name: str) -> str:
    return LEGACY_TOOL_ALIASES.get(name, name)


def parse_rule(text: str) -> RuleValue:
    """Parse ``Tool`` or ``Tool(content)``. Parentheses inside the content are kept as is.

    ``Bash(*)`` and ``Bash()`` mean the same as ``Bash``: every use of the tool.
    """
    s = text.strip()
    if not s:
        raise RuleSyntaxError("empty rule")
    open_at = s.find("(")
    if open_at == -1:
        if ")" in s:
            raise RuleSyntaxError(f"unbalanced ')' in rule {text!r}")
        return RuleValue(canonical_tool_name(s))
    if not s.endswith(")"):
        raise RuleSyntaxError(f"rule {text!r} must end with ')'")
    name = s[:open_at].strip()
    if not name:
        raise RuleSyntaxError(f"rule {text!r} has no tool name")
    content = s[open_at + 1 : -1]
    if content.strip() in ("", "*"):
        return RuleValue(canonical_tool_name(name))
    return RuleValue(canonical_tool_name(name), content)


def make_rule(
    text: str,
    behavior: RuleBehavior | str,
    source: RuleSource | str = RuleSource.CLI,
    base_dir: Path | None = None,
) -> PermissionRule:
    """Convenience: parse ``text`` into a rule with a behaviour and a source."""
    return PermissionRule(RuleSource(source), RuleBehavior(behavior), parse_rule(text), base_dir)
