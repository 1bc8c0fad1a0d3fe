"""What the ``nerve`` process does to itself before it builds anything: the cyclic GC paused
while the session is built (``gc_pause``). Nothing here changes another module: start-up is
made fast by importing less (lazy imports), never by replacing part of Python or a
dependency. Imports nothing of Nerve's own: every wing may use it.
"""

import sys

__all__ = ["gc_pause"]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{name}")
    return sys.modules[f"{__name__}.{name}"]
