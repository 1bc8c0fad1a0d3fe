"""Pure permission policy: modes, rules, the decision engine and bash analysis.

Its surface is what ``tools`` and ``agent_cli`` use: the types, the engine (``decide``), rules
and their syntax, modes, the path and domain matchers, the safety checks. Importing the package
is light: the bash analysis (and tree-sitter) loads on the first Bash request the engine
judges (``permissions.bash`` has its own surface).
"""

from permissions.domains import domain_rule_matches, url_host
from permissions.engine import decide, tool_name_matches
from permissions.from_settings import permission_context_from_settings, rules_from_strings
from permissions.modes import apply_mode, next_mode
from permissions.paths import PathPattern, compile_path_pattern, first_matching_path_rule
from permissions.rules import (
    LEGACY_TOOL_ALIASES,
    RuleSyntaxError,
    canonical_tool_name,
    make_rule,
    parse_rule,
)
from permissions.safety import (
    PROTECTED_FILES,
    check_path_tricks,
    check_write_path,
    is_inside_working_dirs,
    is_protected_path,
)
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    PermissionRule,
    ReasonKind,
    RuleBehavior,
    RuleSource,
    RuleValue,
    SafetyCheck,
    ToolKind,
    Verdict,
)

__all__ = [
    "LEGACY_TOOL_ALIASES",
    "PROTECTED_FILES",
    "Decision",
    "PathPattern",
    "PermissionContext",
    "PermissionMode",
    "PermissionRequest",
    "PermissionRule",
    "ReasonKind",
    "RuleBehavior",
    "RuleSource",
    "RuleSyntaxError",
    "RuleValue",
    "SafetyCheck",
    "ToolKind",
    "Verdict",
    "apply_mode",
    "canonical_tool_name",
    "check_path_tricks",
    "check_write_path",
    "compile_path_pattern",
    "decide",
    "domain_rule_matches",
    "first_matching_path_rule",
    "is_inside_working_dirs",
    "is_protected_path",
    "make_rule",
    "next_mode",
    "parse_rule",
    "permission_context_from_settings",
    "rules_from_strings",
    "tool_name_matches",
    "url_host",
]
