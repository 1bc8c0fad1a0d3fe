"""The fourteen steps every tool call travels, the streaming executor, the result budget.

Its surface is what the loop and the rest of ``tools`` use: ``run_tool_call`` and the
``StreamingToolExecutor``, the call's data (``ToolCall``, ``CallState``, ``CallOutcome``), the
budget, the permission step's helpers and the file-watch service. Importing the package imports
none of its modules: each name loads its module on first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from tools.pipeline.budget import ConversationBudget, persist_result
    from tools.pipeline.executor import StreamingToolExecutor
    from tools.pipeline.file_watch import FileWatch
    from tools.pipeline.permission import (
        REJECT_MESSAGE,
        REJECT_WITH_FEEDBACK,
        build_request,
        session_rules_modifier,
        suggestion_updates,
    )
    from tools.pipeline.steps import run_tool_call
    from tools.pipeline.types import (
        INTERRUPTED_MESSAGE,
        CallOutcome,
        CallState,
        SafetyClassifier,
        ToolCall,
        call_header,
        find_tool,
    )

__all__ = [
    "INTERRUPTED_MESSAGE",
    "REJECT_MESSAGE",
    "REJECT_WITH_FEEDBACK",
    "CallOutcome",
    "CallState",
    "ConversationBudget",
    "FileWatch",
    "SafetyClassifier",
    "StreamingToolExecutor",
    "ToolCall",
    "build_request",
    "call_header",
    "find_tool",
    "persist_result",
    "run_tool_call",
    "session_rules_modifier",
    "suggestion_updates",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "budget": ("ConversationBudget", "persist_result"),
    "executor": ("StreamingToolExecutor",),
    "file_watch": ("FileWatch",),
    "permission": (
        "REJECT_MESSAGE",
        "REJECT_WITH_FEEDBACK",
        "build_request",
        "session_rules_modifier",
        "suggestion_updates",
    ),
    "steps": ("run_tool_call",),
    "types": (
        "CallOutcome",
        "CallState",
        "INTERRUPTED_MESSAGE",
        "SafetyClassifier",
        "ToolCall",
        "call_header",
        "find_tool",
    ),
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
