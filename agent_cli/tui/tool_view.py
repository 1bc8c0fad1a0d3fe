"""Tool calls in the conversation: started, their live progress, their result; and retries.

The app hands these events here (``show_tool_event``); each call is one ``ToolCall`` widget kept
in ``app._tool_widgets`` by its tool_use id.
"""

from __future__ import annotations

from typing import Any

from agent_cli.loop.events import (
    PermissionAsked,
    PermissionDecided,
    RetryEvent,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from agent_cli.tui.labels import retry_text
from agent_cli.tui.permission_flow import rejected_text
from agent_cli.tui.todos import result_view
from agent_cli.tui.widgets import ToolCall

__all__ = ["show_tool_event"]


async def show_tool_event(app: Any, event: Any) -> bool:
    """Render ``event`` in ``app`` (a ``NerveApp``); False when it is not a tool or retry event."""
    widgets: dict[str, ToolCall] = app._tool_widgets
    if isinstance(event, ToolStarted):
        await app._end_text()
        app.working.streamed(len(str(event.input)))
        widget = ToolCall(event.tool_use_id, event.header or event.name)
        widgets[event.tool_use_id] = widget
        await app.conversation.add(widget)
    elif isinstance(event, ToolProgress):
        if (w := widgets.get(event.tool_use_id)) is not None:
            w.progress(event.text)
    elif isinstance(event, ToolFinished):
        w = widgets.get(event.tool_use_id)
        if w is None:
            w = widgets[event.tool_use_id] = ToolCall(event.tool_use_id, event.name)
            await app.conversation.add(w)
        content, expanded = result_view(event.name, event.content, event.is_error, event.output)
        content = rejected_text(app, event.tool_use_id) or content
        w.finish(content, event.is_error, event.summary, expanded=expanded)
    elif isinstance(event, RetryEvent):
        app.working.retrying(
            event.attempt, event.max_attempts, event.delay_s, event.reason, event.endpoint
        )
        app.say(retry_text(event), "warning")
    elif isinstance(event, PermissionAsked):
        if (w := widgets.get(event.tool_use_id)) is not None:
            w.waiting()
        return False
    elif isinstance(event, PermissionDecided):
        if event.decision == "allow" and (w := widgets.get(event.tool_use_id)) is not None:
            w.restart_clock()  # the time it ran, not the time it waited for an answer
        return False  # the app shows a denial
    else:
        return False
    return True
