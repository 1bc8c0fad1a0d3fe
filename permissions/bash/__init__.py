"""Bash command analysis with tree-sitter-bash: simple commands, wrappers, read-only tables."""

from permissions.bash.assess import (
    MAX_COMMAND_CHARS,
    assess_bash,
    bash_rule_matches,
    is_read_only_command,
)
from permissions.bash.git import discover_repository, trusted_gitdir
from permissions.bash.parse import ParsedScript, Redirect, SimpleCommand, parse_simple_commands
from permissions.bash.types import BashAssessment, SubcommandTrace

__all__ = [
    "MAX_COMMAND_CHARS",
    "BashAssessment",
    "ParsedScript",
    "Redirect",
    "SimpleCommand",
    "SubcommandTrace",
    "assess_bash",
    "bash_rule_matches",
    "discover_repository",
    "is_read_only_command",
    "parse_simple_commands",
    "trusted_gitdir",
]
