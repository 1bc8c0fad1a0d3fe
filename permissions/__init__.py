"""Pure permission policy: modes, rules, the decision engine and bash analysis.

Importing the package is light: the bash analysis (and tree-sitter) loads on the first Bash
request the engine judges.
"""

from permissions.engine import decide
from permissions.modes import next_mode
from permissions.rules import make_rule, parse_rule
from permissions.safety import check_path_tricks, check_write_path, is_inside_working_dirs
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
    "Decision",
    "PermissionContext",
    "PermissionMode",
    "PermissionRequest",
    "PermissionRule",
    "ReasonKind",
    "RuleBehavior",
    "RuleSource",
    "RuleValue",
    "SafetyCheck",
    "ToolKind",
    "Verdict",
    "check_path_tricks",
    "check_write_path",
    "decide",
    "is_inside_working_dirs",
    "make_rule",
    "next_mode",
    "parse_rule",
]
