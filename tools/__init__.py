"""The tool system: contract, registry, pipeline, executor, budget, hooks, built-in tools.

Its surface is what ``agent_cli`` builds on: the tool contract (``Tool``, ``build_tool``,
``ToolResult``, the ``ToolError`` family), the context a call runs in (``ToolUseContext`` and
its groups), the Messages API shapes (``tools.messages``), the questions a tool asks, the
registry, the side-model port and the terminal-text guards. Importing ``tools`` imports none of
its modules: each name loads its module on first use (PEP 562).
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at start-up
if TYPE_CHECKING:
    from tools.base import ProgressFn, Tool, build_tool
    from tools.context import (
        AbortSignal,
        AgentContext,
        Callbacks,
        ConversationState,
        PermissionAnswer,
        PermissionPrompt,
        PermissionResponse,
        ReadFileState,
        ReadRecord,
        RuntimeState,
        ToolOptions,
        ToolServices,
        ToolUseContext,
        content_hash,
        create_subagent_context,
    )
    from tools.errors import (
        FatalError,
        InputError,
        PermissionDeniedError,
        ToolCancelled,
        ToolError,
        ToolExecutionError,
        ToolTimeoutError,
    )
    from tools.file_context import FileContextProvider
    from tools.messages import (
        ContentBlock,
        DocumentBlock,
        ImageBlock,
        Message,
        RedactedThinkingBlock,
        ResultBlock,
        Role,
        ServerToolUseBlock,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        WebSearchResultBlock,
        system_reminder,
        text_block,
        tool_result_block,
    )
    from tools.questions import (
        OTHER_LABEL,
        Question,
        QuestionOption,
        QuestionPrompt,
        QuestionResponse,
    )
    from tools.registry import assemble_tool_pool, get_all_base_tools, tools_for_api
    from tools.result import ContextModifier, ToolResult, ValidationError
    from tools.side_model import FAST, MAIN, SideModel, SideModelError, SideReply, SideRequest
    from tools.terminal_text import (
        StreamNeutralizer,
        has_hidden,
        hidden_note,
        json_safe,
        neutralize,
        reveal,
    )

__all__ = [
    "FAST",
    "MAIN",
    "OTHER_LABEL",
    "AbortSignal",
    "AgentContext",
    "Callbacks",
    "ContentBlock",
    "ContextModifier",
    "ConversationState",
    "DocumentBlock",
    "FatalError",
    "FileContextProvider",
    "ImageBlock",
    "InputError",
    "Message",
    "PermissionAnswer",
    "PermissionDeniedError",
    "PermissionPrompt",
    "PermissionResponse",
    "ProgressFn",
    "Question",
    "QuestionOption",
    "QuestionPrompt",
    "QuestionResponse",
    "ReadFileState",
    "ReadRecord",
    "RedactedThinkingBlock",
    "ResultBlock",
    "Role",
    "RuntimeState",
    "ServerToolUseBlock",
    "SideModel",
    "SideModelError",
    "SideReply",
    "SideRequest",
    "StreamNeutralizer",
    "TextBlock",
    "ThinkingBlock",
    "Tool",
    "ToolCancelled",
    "ToolError",
    "ToolExecutionError",
    "ToolOptions",
    "ToolResult",
    "ToolResultBlock",
    "ToolServices",
    "ToolTimeoutError",
    "ToolUseBlock",
    "ToolUseContext",
    "ValidationError",
    "WebSearchResultBlock",
    "assemble_tool_pool",
    "build_tool",
    "content_hash",
    "create_subagent_context",
    "get_all_base_tools",
    "has_hidden",
    "hidden_note",
    "json_safe",
    "neutralize",
    "reveal",
    "system_reminder",
    "text_block",
    "tool_result_block",
    "tools_for_api",
]

# Each name's module, imported on the name's first use (``__getattr__``).
_MODULES = {
    "base": ("ProgressFn", "Tool", "build_tool"),
    "context": (
        "AbortSignal",
        "AgentContext",
        "Callbacks",
        "ConversationState",
        "PermissionAnswer",
        "PermissionPrompt",
        "PermissionResponse",
        "ReadFileState",
        "ReadRecord",
        "RuntimeState",
        "ToolOptions",
        "ToolServices",
        "ToolUseContext",
        "content_hash",
        "create_subagent_context",
    ),
    "errors": (
        "FatalError",
        "InputError",
        "PermissionDeniedError",
        "ToolCancelled",
        "ToolError",
        "ToolExecutionError",
        "ToolTimeoutError",
    ),
    "file_context": ("FileContextProvider",),
    "messages": (
        "ContentBlock",
        "DocumentBlock",
        "ImageBlock",
        "Message",
        "RedactedThinkingBlock",
        "ResultBlock",
        "Role",
        "ServerToolUseBlock",
        "TextBlock",
        "ThinkingBlock",
        "ToolResultBlock",
        "ToolUseBlock",
        "WebSearchResultBlock",
        "system_reminder",
        "text_block",
        "tool_result_block",
    ),
    "questions": (
        "OTHER_LABEL",
        "Question",
        "QuestionOption",
        "QuestionPrompt",
        "QuestionResponse",
    ),
    "registry": ("assemble_tool_pool", "get_all_base_tools", "tools_for_api"),
    "result": ("ContextModifier", "ToolResult", "ValidationError"),
    "side_model": ("FAST", "MAIN", "SideModel", "SideModelError", "SideReply", "SideRequest"),
    "terminal_text": (
        "StreamNeutralizer",
        "has_hidden",
        "hidden_note",
        "json_safe",
        "neutralize",
        "reveal",
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
