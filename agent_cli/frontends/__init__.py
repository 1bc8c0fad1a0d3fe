"""The ways in: print mode, the interactive app, the offline demo, the SDK's mode.

Each way in is a subpackage (``demo``, ``print``, ``sdk``, ``stream_json``) or a module
(``interactive``); ``agent_cli.cli`` picks one. Importing the package imports none of them.
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.frontends.interactive import run_interactive

__all__ = ["run_interactive"]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "interactive": ("run_interactive",),
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
