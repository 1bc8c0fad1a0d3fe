"""The conversation's widgets and the prompt input.

Importing the package imports none of its modules (nor Textual): each name loads its module on
first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from agent_cli.tui.widgets.compact import show_compact_progress
    from agent_cli.tui.widgets.conversation import Conversation, stored_entries
    from agent_cli.tui.widgets.items import (
        NoticeLine,
        StatusBar,
        StreamStats,
        ToolCall,
        UserMessage,
    )
    from agent_cli.tui.widgets.markdown import AssistantMessage
    from agent_cli.tui.widgets.prompt_input import CompletionList, PromptInput
    from agent_cli.tui.widgets.settled import PartRetirer
    from agent_cli.tui.widgets.spinner import WorkingLine
    from agent_cli.tui.widgets.status_line import CustomStatusLine
    from agent_cli.tui.widgets.stream_split import FenceTracker
    from agent_cli.tui.widgets.thinking import refresh_thinking, show_thinking_event
    from agent_cli.tui.widgets.toasts import keep_toasts_above

__all__ = [
    "AssistantMessage",
    "CompletionList",
    "Conversation",
    "CustomStatusLine",
    "FenceTracker",
    "NoticeLine",
    "PartRetirer",
    "PromptInput",
    "StatusBar",
    "StreamStats",
    "ToolCall",
    "UserMessage",
    "WorkingLine",
    "keep_toasts_above",
    "refresh_thinking",
    "show_compact_progress",
    "show_thinking_event",
    "stored_entries",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "compact": ("show_compact_progress",),
    "conversation": ("Conversation", "stored_entries"),
    "items": ("NoticeLine", "StatusBar", "StreamStats", "ToolCall", "UserMessage"),
    "markdown": ("AssistantMessage",),
    "prompt_input": ("CompletionList", "PromptInput"),
    "settled": ("PartRetirer",),
    "spinner": ("WorkingLine",),
    "status_line": ("CustomStatusLine",),
    "stream_split": ("FenceTracker",),
    "thinking": ("refresh_thinking", "show_thinking_event"),
    "toasts": ("keep_toasts_above",),
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
