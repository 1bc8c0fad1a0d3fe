"""Processes Nerve starts: process groups, cgroup scopes, owners and the reaper, background tasks.

Its surface is what Bash, hooks, the sandbox and the session use. ``containment.containment``
is not among the names: it would shadow its module; import it from ``tools.process.containment``.
Importing the package imports none of its modules: each name loads its module on first use
(PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from tools.process.background import BackgroundTaskManager, TaskSnapshot, get_manager
    from tools.process.containment import Scope, new_scope
    from tools.process.groups import group_has_live_members
    from tools.process.output import (
        BashProgress,
        OutputCollector,
        clean_text,
        new_spool_path,
        spool_dir,
    )
    from tools.process.owners import (
        Owner,
        forget_own_lease,
        lease_dir,
        note_group,
        owner_env,
        read_stat,
        self_owner,
    )
    from tools.process.reaper import close_scopes, start_reaper
    from tools.process.runner import RunOutcome, bash_path, run_in_group

__all__ = [
    "BackgroundTaskManager",
    "BashProgress",
    "OutputCollector",
    "Owner",
    "RunOutcome",
    "Scope",
    "TaskSnapshot",
    "bash_path",
    "clean_text",
    "close_scopes",
    "forget_own_lease",
    "get_manager",
    "group_has_live_members",
    "lease_dir",
    "new_scope",
    "new_spool_path",
    "note_group",
    "owner_env",
    "read_stat",
    "run_in_group",
    "self_owner",
    "spool_dir",
    "start_reaper",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "background": ("BackgroundTaskManager", "TaskSnapshot", "get_manager"),
    "containment": ("Scope", "new_scope"),
    "groups": ("group_has_live_members",),
    "output": ("BashProgress", "OutputCollector", "clean_text", "new_spool_path", "spool_dir"),
    "owners": (
        "Owner",
        "forget_own_lease",
        "lease_dir",
        "note_group",
        "owner_env",
        "read_stat",
        "self_owner",
    ),
    "reaper": ("close_scopes", "start_reaper"),
    "runner": ("RunOutcome", "bash_path", "run_in_group"),
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
