"""Subcommands of ``nerve`` (each module exposes ``run(argv) -> int``; ``runner`` what they
share).

The surface is the modules themselves (one ``run`` each, so no name could stand for the
package): ``agent_cli.cli`` imports the one it needs. Importing the package imports none of
them.
"""

import sys

__all__ = ["config_cmd", "mcp_cmd", "permissions_check"]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{name}")
    return sys.modules[f"{__name__}.{name}"]
