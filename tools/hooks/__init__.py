"""Claude Code's hooks: configuration, matching, running each kind, reading their output.

Its surface is what the session and the pipeline use: the ``HookRunner`` (and its protocol),
SDK callback hooks, the env file of SessionStart hooks, and the helpers the pipeline's hook
steps share. Importing the package imports none of its modules: each name loads its module on
first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from tools.hooks.callbacks import HookConfigError, parse_callback_hooks
    from tools.hooks.env_file import exported_by_env_file
    from tools.hooks.payloads import hook_tool_response
    from tools.hooks.process import run_process
    from tools.hooks.runner import HookRunner
    from tools.hooks.types import HookRunnerProtocol, PreToolUseOutcome

__all__ = [
    "HookConfigError",
    "HookRunner",
    "HookRunnerProtocol",
    "PreToolUseOutcome",
    "exported_by_env_file",
    "hook_tool_response",
    "parse_callback_hooks",
    "run_process",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "callbacks": ("HookConfigError", "parse_callback_hooks"),
    "env_file": ("exported_by_env_file",),
    "payloads": ("hook_tool_response",),
    "process": ("run_process",),
    "runner": ("HookRunner",),
    "types": ("HookRunnerProtocol", "PreToolUseOutcome"),
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
