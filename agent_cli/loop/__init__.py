"""The agent loop: turns, events, messages, the system prompt, the transcript recorder.

Its surface is what the session, the sub-agents and the front ends use: ``AgentLoop`` and its
ports, the events a turn yields, the conversation helpers, the system prompt, checkpoints and
the context meter. ``context_usage.context_usage`` is not among the names: it would shadow its
module. Importing the package imports none of its modules: each name loads its module on first
use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop, LoopConfig, ModelPort, SessionLinks
    from agent_cli.loop.checkpoints import BLOB_DIR, CheckpointStore, FileChange
    from agent_cli.loop.context_meter import estimate_tokens
    from agent_cli.loop.context_policy import ContextPolicy
    from agent_cli.loop.context_usage import ContextUsage
    from agent_cli.loop.events import (
        AgentEvent,
        CompactProgress,
        ErrorEvent,
        Notice,
        PermissionAsked,
        PermissionDecided,
        RetryEvent,
        TextDelta,
        ThinkingBlock,
        ToolFinished,
        ToolProgress,
        ToolStarted,
        TurnFinished,
    )
    from agent_cli.loop.messages import (
        answer_dangling_tool_uses,
        content_blocks,
        system_reminder,
        text_of,
        tool_use_ids,
    )
    from agent_cli.loop.system_prompt import build_system_prompt, gather_environment
    from agent_cli.loop.turn_context import context_for_turn, usage_dict

__all__ = [
    "BLOB_DIR",
    "AgentEvent",
    "AgentLoop",
    "CheckpointStore",
    "CompactProgress",
    "ContextPolicy",
    "ContextUsage",
    "ErrorEvent",
    "FileChange",
    "LoopConfig",
    "ModelPort",
    "Notice",
    "PermissionAsked",
    "PermissionDecided",
    "RetryEvent",
    "SessionLinks",
    "TextDelta",
    "ThinkingBlock",
    "ToolFinished",
    "ToolProgress",
    "ToolStarted",
    "TurnFinished",
    "answer_dangling_tool_uses",
    "build_system_prompt",
    "content_blocks",
    "context_for_turn",
    "estimate_tokens",
    "gather_environment",
    "system_reminder",
    "text_of",
    "tool_use_ids",
    "usage_dict",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "agent_loop": ("AgentLoop", "LoopConfig", "ModelPort", "SessionLinks"),
    "checkpoints": ("BLOB_DIR", "CheckpointStore", "FileChange"),
    "context_meter": ("estimate_tokens",),
    "context_policy": ("ContextPolicy",),
    "context_usage": ("ContextUsage",),
    "events": (
        "AgentEvent",
        "CompactProgress",
        "ErrorEvent",
        "Notice",
        "PermissionAsked",
        "PermissionDecided",
        "RetryEvent",
        "TextDelta",
        "ThinkingBlock",
        "ToolFinished",
        "ToolProgress",
        "ToolStarted",
        "TurnFinished",
    ),
    "messages": (
        "answer_dangling_tool_uses",
        "content_blocks",
        "system_reminder",
        "text_of",
        "tool_use_ids",
    ),
    "system_prompt": ("build_system_prompt", "gather_environment"),
    "turn_context": ("context_for_turn", "usage_dict"),
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
