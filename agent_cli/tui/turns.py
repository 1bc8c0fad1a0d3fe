"""A turn running in the app: the model's answer to a prompt, or a session operation rendered
like one (``/compact``).

``TurnRunner`` is a part of ``NerveApp``. It runs the turn's events in a worker (group
``"turn"``) and hands each to the app's ``EventView``; it keeps whether a turn is running and
whether the user interrupted it, and the prompts sent meanwhile, which start one by one after it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agent_cli.tui.bell import ring_bell
from agent_cli.tui.widgets.items import UserMessage

if TYPE_CHECKING:
    from agent_cli.tui.app import NerveApp

__all__ = ["FORCE_STOP_S", "INTERRUPTED", "TurnRunner"]

INTERRUPTED = "Interrupted · What should Nerve do instead?"
FORCE_STOP_S = 3.0  # after Esc, how long a turn may take to stop before its worker is cancelled


class TurnRunner:
    """``submit`` a prompt (queued while a turn runs), ``start`` one now, or ``run_events`` of a
    session operation; ``abort``/``interrupt`` stop the running turn. ``running`` and
    ``interrupted`` say where it is."""

    def __init__(self, app: NerveApp) -> None:
        self._app = app
        self.running = False
        self.interrupted = False
        self._queued: list[str] = []

    def submit(self, prompt: str) -> None:
        """Start ``prompt`` now, or after the running turn (and the prompts queued before it)."""
        if self.running:
            self._queued.append(prompt)
            self._app.say(f"Queued: {prompt.splitlines()[0][:80]}")
        else:
            self.start(prompt)

    def start(self, prompt: str) -> None:
        """Send ``prompt`` to the model: shown as typed (a big paste as its placeholder), sent
        whole, with the images pasted for it."""
        app = self._app
        self._begin()
        app.conversation.mount(UserMessage(prompt))
        images = app.pasted_images.take(prompt)
        whole = app.prompt_input.pasted_texts.expand(prompt)
        run = app.session.run_turn
        self._run_worker(run(whole, images=images) if images else run(whole))

    def run_events(self, events: AsyncIterator[Any]) -> None:
        """Render a session operation's events like a turn's (``/compact``): the UI stays
        responsive and Esc interrupts it."""
        self._begin()
        self._run_worker(events)

    def abort(self) -> None:
        """Ask the session to stop the running turn, and say it was interrupted."""
        self._app.session.abort()
        self.mark_interrupted()

    def interrupt(self) -> None:
        """Esc: abort, and cancel the turn's worker if it has not stopped ``FORCE_STOP_S`` later."""
        self.abort()
        self._app.set_timer(FORCE_STOP_S, self._force_stop)

    def mark_interrupted(self) -> None:
        """Say once that the turn was interrupted."""
        if not self.interrupted:
            self.interrupted = True
            self._app.say(INTERRUPTED, "warning")

    def _begin(self) -> None:
        self.running = True
        self.interrupted = False
        self._app.working.start()

    def _run_worker(self, events: AsyncIterator[Any]) -> None:
        self._app.run_worker(self._render(events), name="turn", group="turn")

    def _force_stop(self) -> None:
        if self.running and self.interrupted:
            self._app.workers.cancel_group(self._app, "turn")

    async def _render(self, events: AsyncIterator[Any]) -> None:
        view = self._app.event_view
        view.new_turn()
        try:
            async for event in events:
                await view.handle(event)
        except Exception as exc:  # CancelledError (a forced stop) is not an Exception: it unwinds
            self._app.say(f"Error: {type(exc).__name__}: {exc}", "error")
        finally:
            await view.end_turn(interrupted=self.interrupted)
            self._end()

    def _end(self) -> None:
        app = self._app
        self.running = False
        app.working.stop()
        app.refresh_status()
        if self._queued:
            app.call_later(self.start, self._queued.pop(0))
        elif not self.interrupted:
            ring_bell(app)  # now it waits for the user
