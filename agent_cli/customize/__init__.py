"""What users write in .claude/ and .nerve/: memory files, agent definitions, commands,
skills, path rules, ``@`` mentions.

Importing the package imports none of its modules: each name loads its module on first use
(PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.customize.agents import find_agent, load_agent_definitions
    from agent_cli.customize.catalog import CommandCatalog, listing_for_prompt
    from agent_cli.customize.cli_agents import CliAgentsError, merge_agents, parse_cli_agents
    from agent_cli.customize.commands import CommandSet, PromptCommand, load_prompt_commands
    from agent_cli.customize.expand import (
        ToolRunner,
        command_header,
        content_text,
        expand_command,
        new_call_id,
    )
    from agent_cli.customize.init import init_command
    from agent_cli.customize.memory import load_memory_files, render_memory
    from agent_cli.customize.memory_edit import append_note, editable_memory_files, memory_targets
    from agent_cli.customize.mention_refs import (
        Mention,
        find_mentions,
        find_pasted_images,
        resolve_ref,
    )
    from agent_cli.customize.rules import PathRules, load_rules

__all__ = [
    "CliAgentsError",
    "CommandCatalog",
    "CommandSet",
    "Mention",
    "PathRules",
    "PromptCommand",
    "ToolRunner",
    "append_note",
    "command_header",
    "content_text",
    "editable_memory_files",
    "expand_command",
    "find_agent",
    "find_mentions",
    "find_pasted_images",
    "init_command",
    "listing_for_prompt",
    "load_agent_definitions",
    "load_memory_files",
    "load_prompt_commands",
    "load_rules",
    "memory_targets",
    "merge_agents",
    "new_call_id",
    "parse_cli_agents",
    "render_memory",
    "resolve_ref",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "agents": ("find_agent", "load_agent_definitions"),
    "catalog": ("CommandCatalog", "listing_for_prompt"),
    "cli_agents": ("CliAgentsError", "merge_agents", "parse_cli_agents"),
    "commands": ("CommandSet", "PromptCommand", "load_prompt_commands"),
    "expand": ("ToolRunner", "command_header", "content_text", "expand_command", "new_call_id"),
    "init": ("init_command",),
    "memory": ("load_memory_files", "render_memory"),
    "memory_edit": ("append_note", "editable_memory_files", "memory_targets"),
    "mention_refs": ("Mention", "find_mentions", "find_pasted_images", "resolve_ref"),
    "rules": ("PathRules", "load_rules"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{module}")
    value = getattr(sys.modules[f"{__name__}.{module}"], name)
    globals()[name] = value
    return value
