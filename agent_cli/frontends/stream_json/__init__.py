"""``--output-format stream-json``: Claude Code's frames, one JSON object a line.

Importing the package imports none of its modules: each name loads its module on first use
(PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.frontends.stream_json.parts import server_status
    from agent_cli.frontends.stream_json.result import local_command_frame, now_iso
    from agent_cli.frontends.stream_json.writer import StreamJsonWriter

__all__ = ["StreamJsonWriter", "local_command_frame", "now_iso", "server_status"]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "parts": ("server_status",),
    "result": ("local_command_frame", "now_iso"),
    "writer": ("StreamJsonWriter",),
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
