"""``nerve -p``: one turn, no UI; its prompt, slash commands, structured output.

Importing the package imports none of its modules: each name loads its module on first use
(PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.frontends.print.mcp_permissions import McpPermissionPrompt
    from agent_cli.frontends.print.mode import event_to_json, run_print_mode
    from agent_cli.frontends.print.permission_answer import response_for
    from agent_cli.frontends.print.structured_output import StructuredOutput, for_option

__all__ = [
    "McpPermissionPrompt",
    "StructuredOutput",
    "event_to_json",
    "for_option",
    "response_for",
    "run_print_mode",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "mcp_permissions": ("McpPermissionPrompt",),
    "mode": ("event_to_json", "run_print_mode"),
    "permission_answer": ("response_for",),
    "structured_output": ("StructuredOutput", "for_option"),
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
