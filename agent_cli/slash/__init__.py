"""Slash commands: one registry shared by the interactive app and print mode.

``registry`` holds the command table and the host protocol a front end implements; ``builtin``
the commands Nerve ships; ``text`` the plain-text views they print (also used by the TUI);
``settings_view`` the rows of ``/config``. Importing the package imports none of its modules:
each name loads its module on first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.slash.builtin import default_registry, registry_for
    from agent_cli.slash.context_view import change_lines, rewind_summary
    from agent_cli.slash.custom import is_memory_note, remember_note
    from agent_cli.slash.mcp_approval import ask_project_servers
    from agent_cli.slash.names import PRINT_COMMANDS
    from agent_cli.slash.registry import SlashCommand, parse_slash
    from agent_cli.slash.settings_view import (
        TOGGLES,
        Toggle,
        apply_toggle,
        layer_sources,
        next_value,
        rule_file,
        setting_rows,
        toggle_value,
    )
    from agent_cli.slash.text import checklist, format_cost, format_tokens, mode_label
    from agent_cli.slash.views import content_text, tool_header

__all__ = [
    "PRINT_COMMANDS",
    "TOGGLES",
    "SlashCommand",
    "Toggle",
    "apply_toggle",
    "ask_project_servers",
    "change_lines",
    "checklist",
    "content_text",
    "default_registry",
    "format_cost",
    "format_tokens",
    "is_memory_note",
    "layer_sources",
    "mode_label",
    "next_value",
    "parse_slash",
    "registry_for",
    "remember_note",
    "rewind_summary",
    "rule_file",
    "setting_rows",
    "toggle_value",
    "tool_header",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "builtin": ("default_registry", "registry_for"),
    "context_view": ("change_lines", "rewind_summary"),
    "custom": ("is_memory_note", "remember_note"),
    "mcp_approval": ("ask_project_servers",),
    "names": ("PRINT_COMMANDS",),
    "registry": ("SlashCommand", "parse_slash"),
    "settings_view": (
        "TOGGLES",
        "Toggle",
        "apply_toggle",
        "layer_sources",
        "next_value",
        "rule_file",
        "setting_rows",
        "toggle_value",
    ),
    "text": ("checklist", "format_cost", "format_tokens", "mode_label"),
    "views": ("content_text", "tool_header"),
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
