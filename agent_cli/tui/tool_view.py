"""Tool calls in the conversation: started, their live progress, the permission asked for them,
their result (``ToolView``); and Ctrl+O's full transcript (``toggle_transcript``).

``ToolView`` is part of the app's ``EventView``, which hands it the tool events; each call is one
``ToolCall`` widget, kept by its tool_use id for the turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.tui.widgets.items import ToolCall
from agent_cli.tui.widgets.thinking import refresh_thinking

if TYPE_CHECKING:
    from agent_cli.loop.events import (
        PermissionAsked,
        PermissionDecided,
        ToolFinished,
        ToolProgress,
        ToolStarted,
    )
    from agent_cli.tui.app import NerveApp

__all__ = ["ToolView", "toggle_transcript"]


class ToolView:
    """The running turn's tool calls: ``started``, ``progress``, ``asked``, ``decided``,
    ``finished`` render the events of each; ``interrupt`` marks the unfinished ones when the turn
    is interrupted. ``call_views`` keeps the fields of each output its view reads, so a reload
    (``/rewind``) shows the call as it was shown live."""

    def __init__(self, app: NerveApp) -> None:
        self._app = app
        self._calls: dict[str, ToolCall] = {}
        self.call_views: dict[str, dict[str, Any]] = {}  # tool_use id -> its output's view

    def new_turn(self) -> None:
        self._calls = {}

    def interrupt(self) -> None:
        for widget in self._calls.values():
            widget.interrupt()

    async def started(self, event: ToolStarted) -> None:
        from agent_cli.tui.summaries import shown_header

        self._app.working.streamed(len(str(event.input)))
        widget = ToolCall(event.tool_use_id, shown_header(event.header or event.name))
        widget.tool_name, widget.tool_input = event.name, event.input
        self._calls[event.tool_use_id] = widget
        await self._app.conversation.add(widget)

    async def progress(self, event: ToolProgress) -> None:
        if (widget := self._calls.get(event.tool_use_id)) is not None:
            widget.progress(event.text)

    async def asked(self, event: PermissionAsked) -> None:
        if (widget := self._calls.get(event.tool_use_id)) is not None:
            widget.waiting()

    async def decided(self, event: PermissionDecided) -> None:
        widget = self._calls.get(event.tool_use_id)
        if widget is None:
            return
        if event.decision == "allow":
            widget.restart_clock()  # the time it ran, not the time it waited for an answer
        elif event.decision == "deny":
            widget.note(f"Denied: {event.reason}")

    async def finished(self, event: ToolFinished) -> None:
        from agent_cli.session.restored_calls import view_fields
        from agent_cli.tui.summaries import UserView, rejected_label, shown_header, user_view

        app = self._app
        widget = self._calls.get(event.tool_use_id)
        if widget is None:
            widget = ToolCall(event.tool_use_id, shown_header(event.name))
            self._calls[event.tool_use_id] = widget
            await app.conversation.add(widget)
        view = user_view(event.name, event.content, event.is_error, event.output, app.cwd)
        if fields := view_fields(event.output):  # for a reload (/rewind) to show it the same
            self.call_views[event.tool_use_id] = fields
        rejected = app.permission_flow.rejected_text(event.tool_use_id)
        if rejected is not None:  # what the user said, not the text written for the model
            view = UserView(rejected_label(event.name, widget.tool_input, rejected, app.cwd))
        widget.finish(
            view.text, event.is_error, event.summary, expanded=view.expanded, detail=view.detail
        )


def toggle_transcript(app: NerveApp) -> None:
    """Ctrl+O: show every result whole (and what the model read), or collapse them again."""
    app.transcript_full = not app.transcript_full
    for widget in app.query(ToolCall):
        widget.refresh_result()
    refresh_thinking(app)
    state = "full transcript" if app.transcript_full else "collapsed results"
    app.notify(f"Showing {state} · ctrl+o to toggle", timeout=2)
