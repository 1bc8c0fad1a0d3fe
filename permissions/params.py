"""Parameter rules ``Tool(param:value)`` and subject specifiers such as ``Agent(Explore)``.

A parameter rule matches a top-level scalar field of the tool's input; ``*`` in the value is a
wildcard (``Agent(model:opus*)``). They are deny/ask only: an allow parameter rule would grant
a whole tool on the strength of one field, and a rule on a tool's primary field (``command``,
``file_path``, ``path``, ``notebook_path``, ``url``) would bypass that field's real matcher.
Both are ignored (the settings bridge warns).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "PRIMARY_FIELDS",
    "SPECIFIER_FIELDS",
    "ParamRule",
    "glob_match",
    "param_rule_matches",
    "parse_param_rule",
    "specifier_matches",
]

PRIMARY_FIELDS: frozenset[str] = frozenset({"command", "file_path", "path", "notebook_path", "url"})

# Tools whose rule content names a subject other than a parameter: the input fields it matches.
SPECIFIER_FIELDS: dict[str, tuple[str, ...]] = {
    "Agent": ("subagent_type",),
    "Skill": ("skill", "args"),
}

_PARAM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParamRule:
    """``name:value``: ``value`` is a glob where ``*`` matches anything."""

    name: str
    value: str


@lru_cache(maxsize=1024)
def parse_param_rule(content: str | None) -> ParamRule | None:
    """Parse ``param:value`` content; None if the content does not have that shape.

    The legacy Bash prefix form ``git:*`` also has that shape; callers decide by whether the
    tool's input has a field of that name.
    """
    if content is None:
        return None
    m = _PARAM.match(content.strip())
    return ParamRule(m.group(1), m.group(2)) if m else None


@lru_cache(maxsize=512)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("*")) + "$", re.DOTALL)


def glob_match(pattern: str, text: str) -> bool:
    """Whole-string match where ``*`` matches any run of characters (including none)."""
    return bool(_glob(pattern).match(text))


def _scalar_text(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None  # lists and objects are not scalars: parameter rules never match them


def param_rule_matches(rule: ParamRule, tool_input: Mapping[str, object]) -> bool:
    """Does the parameter rule match this input? Primary and absent fields never match."""
    if rule.name in PRIMARY_FIELDS or rule.name not in tool_input:
        return False
    text = _scalar_text(tool_input[rule.name])
    return text is not None and glob_match(rule.value, text)


def specifier_matches(tool_name: str, content: str, tool_input: Mapping[str, object]) -> bool:
    """``Agent(Explore)``: the subagent type; ``Skill(name)`` / ``Skill(name *)``: the skill."""
    fields = SPECIFIER_FIELDS.get(tool_name)
    if not fields:
        return False
    words = [str(tool_input[f]).strip() for f in fields if tool_input.get(f) not in (None, "")]
    subject = " ".join(words)
    if not subject:
        return False
    if content.endswith(" *") and subject == content[:-2]:
        return True  # `name *` also covers the bare name (word boundary)
    return glob_match(content, subject)
