"""Built-in tools, one module (or package) per tool.

The tools themselves are found by module name (``tools.registry.BASE_TOOL_MODULES``). The
surface is what other packages use besides: the Agent tool's and skills' types, the todo list,
worktrees, the services' types ``ToolUseContext`` names, and the file helpers the loop and the
TUI share with Read. Importing the package imports none of its modules: each name loads its
module on first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from tools.builtin._fs import special_file_reason, state_key
    from tools.builtin._git_worktree import WorktreeError, WorktreeSession, create_or_reuse
    from tools.builtin._read_formats import MAX_IMAGE_FILE_BYTES, image_media_type, read_image
    from tools.builtin._rg import find_rg
    from tools.builtin._text import number_lines
    from tools.builtin._web_cache import PageCache
    from tools.builtin._web_http import FetchLimits
    from tools.builtin.agent import (
        DEFAULT_SUBAGENT_TYPE,
        AgentDefinition,
        AgentProgress,
        SubagentResult,
        SubagentRunner,
    )
    from tools.builtin.skill import LoadedSkill, SkillCatalog, SkillInfo, skill_rules
    from tools.builtin.todo import current_todos, restore_todos, todos_from_messages

__all__ = [
    "DEFAULT_SUBAGENT_TYPE",
    "MAX_IMAGE_FILE_BYTES",
    "AgentDefinition",
    "AgentProgress",
    "FetchLimits",
    "LoadedSkill",
    "PageCache",
    "SkillCatalog",
    "SkillInfo",
    "SubagentResult",
    "SubagentRunner",
    "WorktreeError",
    "WorktreeSession",
    "create_or_reuse",
    "current_todos",
    "find_rg",
    "image_media_type",
    "number_lines",
    "read_image",
    "restore_todos",
    "skill_rules",
    "special_file_reason",
    "state_key",
    "todos_from_messages",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "_fs": ("special_file_reason", "state_key"),
    "_git_worktree": ("WorktreeError", "WorktreeSession", "create_or_reuse"),
    "_read_formats": ("MAX_IMAGE_FILE_BYTES", "image_media_type", "read_image"),
    "_rg": ("find_rg",),
    "_text": ("number_lines",),
    "_web_cache": ("PageCache",),
    "_web_http": ("FetchLimits",),
    "agent": (
        "AgentDefinition",
        "AgentProgress",
        "DEFAULT_SUBAGENT_TYPE",
        "SubagentResult",
        "SubagentRunner",
    ),
    "skill": ("LoadedSkill", "SkillCatalog", "SkillInfo", "skill_rules"),
    "todo": ("current_todos", "restore_todos", "todos_from_messages"),
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
