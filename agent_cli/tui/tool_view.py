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
from agent_cli.session.restored_calls import view_fields
from agent_cli.tui.labels import retry_text
from agent_cli.tui.permission_flow import rejected_text
from agent_cli.tui.summaries import UserView, rejected_label, shown_header, user_view
from agent_cli.tui.widgets.items import ToolCall
from agent_cli.tui.widgets.thinking import refresh_thinking

__all__ = ["show_tool_event", "toggle_transcript"]


async def show_tool_event(app: Any, event: Any) -> bool:
    """Render ``event`` in ``app`` (a ``NerveApp``); False when it is not a tool or retry event."""
    widgets: dict[str, ToolCall] = app._tool_widgets
    if isinstance(event, ToolStarted):
        await app._end_text()
        app.working.streamed(len(str(event.input)))
        widget = ToolCall(event.tool_use_id, shown_header(event.header or event.name))
        widget.tool_name, widget.tool_input = event.name, event.input
        widgets[event.tool_use_id] = widget
        await app.conversation.add(widget)
    elif isinstance(event, ToolProgress):
        if (w := widgets.get(event.tool_use_id)) is not None:
            w.progress(event.text)
    elif isinstance(event, ToolFinished):
        w = widgets.get(event.tool_use_id)
        if w is None:
            w = widgets[event.tool_use_id] = ToolCall(event.tool_use_id, shown_header(event.name))
            await app.conversation.add(w)
        view = user_view(event.name, event.content, event.is_error, event.output, app.cwd)
        if fields := view_fields(event.output):  # for a reload (/rewind) to show it the same
            app.call_views[event.tool_use_id] = fields
        rejected = rejected_text(app, event.tool_use_id)
        if rejected is not None:  # what the user said, not the text written for the model
            view = UserView(rejected_label(event.name, w.tool_input, rejected, app.cwd))
        w.finish(
            view.text, event.is_error, event.summary, expanded=view.expanded, detail=view.detail
        )
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


def toggle_transcript(app: Any) -> None:
    """Ctrl+O: show every result whole (and what the model read), or collapse them again."""
    app.transcript_full = not app.transcript_full
    for widget in app.query(ToolCall):
        widget.refresh_result()
    refresh_thinking(app)
    state = "full transcript" if app.transcript_full else "collapsed results"
    app.notify(f"Showing {state} · ctrl+o to toggle", timeout=2)
