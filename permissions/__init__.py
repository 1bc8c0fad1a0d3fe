"""Pure permission policy: modes, rules, the decision engine and bash analysis.

Importing the package is light: the bash analysis (and tree-sitter) loads on the first Bash
request the engine judges.
"""

from permissions.engine import decide
from permissions.from_settings import permission_context_from_settings
from permissions.modes import apply_mode, next_mode
from permissions.rules import make_rule, parse_rule
from permissions.safety import (
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
    "apply_mode",
    "check_path_tricks",
    "check_write_path",
    "decide",
    "is_inside_working_dirs",
    "is_protected_path",
    "make_rule",
    "next_mode",
    "parse_rule",
    "permission_context_from_settings",
]
