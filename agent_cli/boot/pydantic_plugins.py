"""Start-up without pydantic's plugin discovery.

The first pydantic model class a process defines makes pydantic look for plugins: it imports
``importlib.metadata`` (email, zipfile, csv...) and reads the entry points of every installed
distribution, ~15-20 ms of every ``nerve`` start. Pydantic plugins instrument an application's
own models (logfire, for one); Nerve's are settings files and tool inputs, and a plugin that
some other project installed into the same environment has no business in them. The
documented switch, ``PYDANTIC_DISABLE_PLUGINS``, skips only the scan, and as an environment
variable it would reach every command Nerve runs (the user's own Python programs included).

So the real command (``agent_cli.cli.main`` without arguments, as ``gc_pause``) puts a stand-in
for ``pydantic.plugin._loader`` in ``sys.modules`` before pydantic is imported: its
``get_plugins`` returns no plugins, which is what pydantic does itself with plugins disabled.
Never in a caller's process, and not at all once pydantic is loaded (its choice is made).
``tests/agent_cli/boot/test_pydantic_plugins.py`` checks that pydantic still imports only
``get_plugins`` from the module, so an upgrade that changes that fails a test, not a start.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable
from typing import Any

__all__ = ["LOADER", "skip_plugin_discovery"]

LOADER = "pydantic.plugin._loader"


def _no_plugins() -> Iterable[Any]:
    return ()


def skip_plugin_discovery() -> bool:
    """Make pydantic find no plugins (without importlib.metadata); False if too late."""
    if "pydantic" in sys.modules or LOADER in sys.modules:
        return False
    stand_in = types.ModuleType(
        LOADER, "Nerve: no pydantic plugins (agent_cli.boot.pydantic_plugins)"
    )
    stand_in.get_plugins = _no_plugins  # type: ignore[attr-defined]
    sys.modules[LOADER] = stand_in
    return True
