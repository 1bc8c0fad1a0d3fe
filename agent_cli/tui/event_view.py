"""What the conversation shows of a turn's events as they come: the answer's text streamed,
tool calls (``tool_view.ToolView``), thinking, retries, notices, compaction, errors.

``EventView`` is a part of ``NerveApp``; ``TurnRunner`` hands it each event (``handle``). The
event classes (~10 ms) and the Markdown widgets are imported on the first event, not before the
first frame.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agent_cli.tui.labels import retry_text
from agent_cli.tui.tool_view import ToolView
from agent_cli.tui.widgets.thinking import show_thinking_event

if TYPE_CHECKING:
    from agent_cli.loop.events import (
        CompactProgress,
        ErrorEvent,
        Notice,
        RetryEvent,
        TextDelta,
        ThinkingBlock,
        ToolStarted,
        TurnFinished,
    )
    from agent_cli.tui.app import NerveApp
    from agent_cli.tui.widgets.markdown import AssistantMessage
    from agent_cli.tui.widgets.settled import PartRetirer
    from agent_cli.tui.widgets.stream_split import FenceTracker

__all__ = ["INTERRUPTED_STOPS", "LOOP_INTERRUPTED", "EventView"]

INTERRUPTED_STOPS = frozenset({"aborted", "interrupted", "cancelled"})
LOOP_INTERRUPTED = "Interrupted by user."  # the loop's notice; the app shows INTERRUPTED once

Render = Callable[[Any], Awaitable[None]]


class EventView:
    """``handle`` one event of the running turn; ``new_turn`` and ``end_turn`` around a turn;
    ``end_text`` closes the answer being streamed (what comes next goes below it);
    ``skip_notice`` keeps the session's notice of something the app already said from showing
    twice. ``tools`` is the turn's tool calls."""

    def __init__(self, app: NerveApp) -> None:
        self._app = app
        self.tools = ToolView(app)
        self._said: set[str] = set()
        self._assistant: AssistantMessage | None = None
        self._retirer: PartRetirer | None = None
        self._renderers: dict[type, Render] = {}

    def skip_notice(self, text: str) -> None:
        """The app has shown ``text`` already: a notice of it from the session is not shown."""
        self._said.add(text)

    def new_turn(self) -> None:
        self._assistant = None
        self.tools.new_turn()

    async def end_turn(self, *, interrupted: bool) -> None:
        await self.end_text()
        if interrupted:
            self.tools.interrupt()

    async def handle(self, event: Any) -> None:
        """Render one agent event in place; an event of another kind changes nothing."""
        render = self._renderer_table().get(type(event))
        if render is not None:
            await render(event)

    async def end_text(self) -> None:
        assistant, self._assistant = self._assistant, None
        if assistant is not None:
            await assistant.finish()
        if self._retirer is not None:
            await self._retirer.wait()

    def _renderer_table(self) -> dict[type, Render]:
        if not self._renderers:
            # Imported here, not at the top: the event classes cost ~10 ms the first frame skips.
            from agent_cli.loop import events as ev

            tools = self.tools
            self._renderers = {
                ev.TextDelta: self._text,
                ev.ThinkingBlock: self._thinking,
                ev.ToolStarted: self._tool_started,
                ev.ToolProgress: tools.progress,
                ev.ToolFinished: tools.finished,
                ev.PermissionAsked: tools.asked,
                ev.PermissionDecided: tools.decided,
                ev.RetryEvent: self._retry,
                ev.Notice: self._notice,
                ev.CompactProgress: self._compact,
                ev.ErrorEvent: self._error,
                ev.TurnFinished: self._turn_finished,
            }
        return self._renderers

    async def _text(self, event: TextDelta) -> None:
        if self._app.turns.interrupted:
            return
        text = event.text
        self._app.working.streamed(len(text))
        answer = self._assistant
        if answer is None:
            answer = await self._new_answer_part(None)
        cut = answer.split(text)
        if cut is not None:
            # A long answer continues in a fresh widget (tui/stream_split.py), so each append
            # re-parses a small document; the finished part joins the answer's other finished
            # parts in one widget of rendered lines (tui/settled.py).
            head, text = cut
            answer.feed(head)
            assert self._retirer is not None
            self._retirer.retire(answer, answer.separator)
            answer = await self._new_answer_part(answer.fence)
        answer.feed(text)

    async def _new_answer_part(self, fence: FenceTracker | None) -> AssistantMessage:
        """A widget for the answer's text from here on; ``fence`` is None for a new answer,
        whose finished parts then go to a new ``SettledParts``."""
        from agent_cli.tui.widgets.markdown import AssistantMessage

        app = self._app
        if fence is None:
            from agent_cli.tui.widgets.settled import PartRetirer

            self._retirer = PartRetirer(app.conversation)
        self._assistant = AssistantMessage(
            stats=app.stream_stats,
            fence=fence,
            typing=app.composing,
            # a key read but not yet handled counts too: its echo comes first
            last_key=lambda: max(app.key_arrived, app.prompt_input.last_key_time),
        )
        await app.conversation.add(self._assistant)
        return self._assistant

    async def _thinking(self, event: ThinkingBlock) -> None:
        await show_thinking_event(self._app, event)

    async def _tool_started(self, event: ToolStarted) -> None:
        await self.end_text()
        await self.tools.started(event)

    async def _retry(self, event: RetryEvent) -> None:
        self._app.working.retrying(
            event.attempt, event.max_attempts, event.delay_s, event.reason, event.endpoint
        )
        self._app.say(retry_text(event), "warning")

    async def _notice(self, event: Notice) -> None:
        if event.text == LOOP_INTERRUPTED:
            self._app.turns.mark_interrupted()
        elif event.text not in self._said:
            self._app.say(event.text, "warning" if event.level == "warning" else "info")

    async def _compact(self, event: CompactProgress) -> None:
        from agent_cli.tui.widgets.compact import show_compact_progress

        await show_compact_progress(self._app, event)

    async def _error(self, event: ErrorEvent) -> None:
        self._app.say(f"Error: {event.message}", "error")

    async def _turn_finished(self, event: TurnFinished) -> None:
        await self.end_text()
        if event.stop_reason in INTERRUPTED_STOPS:
            self._app.turns.mark_interrupted()
        self._app.refresh_status()
