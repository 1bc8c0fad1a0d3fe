"""The port between a UI (the Textual TUI, print mode) and a running agent session.

The UI drives a session only through this protocol and renders the events it yields; policy
(permissions, hooks, budgets) stays below, in ``tools`` and ``permissions``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tools.records import datarecord

if TYPE_CHECKING:  # the event classes cost ~10 ms the TUI's first frame does not need
    from agent_cli.loop.events import AgentEvent
    from tools.messages import Message

__all__ = [
    "BackgroundTaskView",
    "PermissionHandler",
    "QuestionHandler",
    "RuleView",
    "SessionPort",
    "ToolView",
]

# The UI implements this: show the prompt (a tools.context.PermissionPrompt), return a
# tools.context.PermissionResponse. Typed as Any here so this module stays import-light.
PermissionHandler = Callable[[Any], Awaitable[Any]]
# AskUserQuestion: show a tools.questions.QuestionPrompt, return a QuestionResponse.
QuestionHandler = Callable[[Any], Awaitable[Any]]


@datarecord(frozen=True, slots=True)
class RuleView:
    behavior: str  # allow | ask | deny
    rule: str
    source: str  # userSettings, projectSettings, localSettings, policySettings, cliArg, session


@datarecord(frozen=True, slots=True)
class ToolView:
    name: str
    description: str
    deferred: bool
    is_mcp: bool


@datarecord(frozen=True, slots=True)
class BackgroundTaskView:
    task_id: str
    command: str
    status: str


class SessionPort(Protocol):
    """What the TUI needs from a session."""

    session_id: str

    @property
    def model(self) -> str:
        """The session's model (``set_model`` changes it)."""
        ...

    @property
    def mode(self) -> str: ...

    def set_mode(self, mode: str) -> None: ...

    def cycle_mode(self) -> str:
        """Shift+Tab: default -> acceptEdits -> plan (-> bypassPermissions if enabled)."""
        ...

    def set_permission_handler(self, handler: PermissionHandler) -> None: ...

    # Optional (the TUI looks it up with ``getattr``): where AskUserQuestion's questions go.
    def set_question_handler(self, handler: QuestionHandler) -> None: ...

    def run_turn(
        self, prompt: str, *, images: Sequence[dict[str, Any]] = ()
    ) -> AsyncIterator[AgentEvent]:
        """One user turn; ``images``: image blocks pasted with the prompt (Ctrl+V)."""
        ...

    def abort(self) -> None:
        """Interrupt the running turn: tools cancelled, every tool_use answered."""
        ...

    async def run_shell(self, command: str) -> str:
        """``!command``: run directly (no model), add the output to the context, return it."""
        ...

    def clear(self) -> None:
        """Start a new conversation (the old one stays resumable)."""
        ...

    def rules(self) -> list[RuleView]: ...

    def add_rule(self, behavior: str, rule: str, destination: str = "localSettings") -> None: ...

    def remove_rule(self, behavior: str, rule: str, source: str) -> bool: ...

    def tools(self) -> list[ToolView]: ...

    def background_tasks(self) -> list[BackgroundTaskView]: ...

    # Optional: the TUI looks these two up with ``getattr`` and says "not available" without them.
    def mcp_servers(self) -> list[Any]:
        """``/mcp``: each configured MCP server's status (``tools.mcp.McpServerView``)."""
        ...

    def add_directory(self, path: str) -> Path:
        """``/add-dir``: a working directory for the rest of the session (``ValueError``)."""
        ...

    def settings_problems(self) -> list[str]:
        """Problems of the settings files (``file:line:col: ...; what is ignored``)."""
        ...

    def take_warnings(self) -> list[str]:
        """Start-up warnings not shown yet (then they are not repeated by the first turn)."""
        ...

    def todos(self) -> list[dict[str, Any]]:
        """``/todos``: the current todo list (``{"content", "status", "activeForm"}`` dicts)."""
        ...

    def usage_summary(self) -> dict[str, Any]:
        """``{"input_tokens", "output_tokens", "cost_usd", "context_tokens", "turns"}``."""
        ...

    def set_model(self, model: str) -> None: ...

    def list_sessions(self) -> list[dict[str, Any]]:
        """For /resume: ``{"session_id", "title", "mtime", "size"}`` newest first."""
        ...

    async def resume(self, session_id: str) -> list[Message]:
        """Switch to a stored session; returns its messages for display."""
        ...

    # The context commands (agent_cli.session.context_ops); looked up with ``getattr`` too.
    def compact(self, instructions: str = "") -> AsyncIterator[AgentEvent]:
        """``/compact``: summarise the conversation; events as a turn's, ``abort`` cancels."""
        ...

    def context_usage(self) -> Any:
        """``/context``: ``agent_cli.loop.context_usage.ContextUsage``."""
        ...

    def rewind_points(self) -> list[Any]:
        """``/rewind``: the prompts to return to (``RewindPoint``), oldest first."""
        ...

    def rewind_preview(self, message_id: str) -> Any:
        """What a rewind to ``message_id`` would change (``RewindPreview``)."""
        ...

    def rewind(self, message_id: str, *, conversation: bool, files: bool) -> Any:
        """Restore the conversation and/or the files to before ``message_id``."""
        ...

    def conversation_messages(self) -> list[Message]:
        """The conversation as it stands now."""
        ...

    def restored_messages(self) -> list[Message]:
        """The conversation the session started with (``nerve -c`` / ``-r ID``), for display."""
        ...

    async def notification(
        self, notification_type: str, message: str, title: str | None = "Nerve"
    ) -> list[str]:
        """Fire Notification hooks (``permission_prompt``, ``idle_prompt``); their warnings.
        Optional: the TUI looks it up with ``getattr``."""
        ...

    async def close(self) -> None: ...
