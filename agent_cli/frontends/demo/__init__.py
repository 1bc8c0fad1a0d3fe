"""``nerve demo``: the offline tour and its scripted model.

Importing the package imports none of its modules (``run_demo`` loads on first use, PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.frontends.demo.tour import run_demo

__all__ = ["run_demo"]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "tour": ("run_demo",),
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
