"""Start-up without Textual's command palette.

``textual.app`` imports ``textual.command`` (the command palette, and through it ``textual.types``
with the Input, Select, OptionList, Tree and DirectoryTree widgets: ~16 modules, ~10 ms of
``nerve``'s first frame on the development machine), and ``textual.theme`` subclasses its
``Provider``. Nerve's app turns the palette off (``NerveApp.ENABLE_COMMAND_PALETTE = False``):
nothing in the process opens it or searches its commands.

So the real command (``agent_cli.cli.main`` without arguments, as ``pydantic_plugins``) puts a
stand-in for ``textual.command`` in ``sys.modules`` before Textual's app module is imported:
the names ``textual.app`` and ``textual.theme`` import from it, as plain classes; opening the
palette raises (it cannot happen with the palette off). Never in a caller's process, and not
at all once ``textual.app`` is loaded. ``tests/agent_cli/boot/test_no_palette.py`` checks that
Textual still imports only these names from the module, so an upgrade that changes that fails
a test, not a start.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["MODULE", "NAMES", "skip_command_palette"]

MODULE = "textual.command"
# What textual.app and textual.theme import from it (textual.system_commands, the palette's own
# provider, is imported only by the palette).
NAMES = (
    "CommandListItem",
    "CommandPalette",
    "DiscoveryHit",
    "Hit",
    "Hits",
    "Provider",
    "SimpleProvider",
)
_WHY = "Nerve runs without Textual's command palette (agent_cli.boot.no_palette)"


class _Placeholder:
    """Stands for a palette class: it can be subclassed and named, not used."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(_WHY)


class _CommandPalette(_Placeholder):
    @staticmethod
    def is_open(app: Any) -> bool:
        return False


def skip_command_palette() -> bool:
    """Put the stand-in in place; False if too late (Textual's app module already loaded)."""
    if MODULE in sys.modules or "textual.app" in sys.modules or "textual.theme" in sys.modules:
        return False
    stand_in = types.ModuleType(MODULE, _WHY)
    for name in NAMES:
        base = _CommandPalette if name == "CommandPalette" else _Placeholder
        setattr(stand_in, name, type(name, (base,), {"__module__": MODULE}))
    stand_in.STAND_IN = True  # type: ignore[attr-defined]
    sys.modules[MODULE] = stand_in
    return True
