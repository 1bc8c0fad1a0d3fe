"""Assistant text widgets. Imported on first use, not before the first frame.

Textual's ``Markdown`` imports markdown_it and Rich's ``Markdown`` imports pygments; neither is
needed to paint the empty app, so ``agent_cli.tui.app`` imports this module when the first
assistant text (streamed or stored) arrives.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Markdown, Static

from agent_cli.tui.safe import clean
from agent_cli.tui.widgets.items import StreamStats
from agent_cli.tui.widgets.stream_split import FenceTracker, cut_point
from tools.terminal_text import StreamNeutralizer

__all__ = [
    "APPEND_INTERVAL_S",
    "KEY_QUIET_S",
    "MAX_KEY_DEFER_S",
    "TYPING_APPEND_INTERVAL_S",
    "AssistantMessage",
    "MarkdownText",
    "append_pause",
    "key_defer",
]

APPEND_INTERVAL_S = 0.05
# While the user types, each append re-lays out and repaints the conversation (~10-25 ms), and a
# key that arrives meanwhile waits behind it (bench/keystroke.py). So the answer is appended in
# the gap right after a key's echo (the next key is rarely under 100 ms away), and at the
# latest TYPING_APPEND_INTERVAL_S after the previous append (``append_pause``).
TYPING_APPEND_INTERVAL_S = 0.5
TYPING_POLL_S = 0.01  # how often a pause while typing looks for a new key
# Right after a keystroke an append waits: the frame that echoes the key then repaints only the
# input, not a re-laid-out answer. Never more than MAX_KEY_DEFER_S in a row (fast typing).
KEY_QUIET_S = 0.05
MAX_KEY_DEFER_S = 0.5


def key_defer(now: float, last_key: float, waited: float) -> float:
    """How much longer an append waits for the echo of the key typed at ``last_key`` (0: go
    now), having waited ``waited`` already. Monotonic seconds."""
    quiet_for = KEY_QUIET_S - (now - last_key)
    return max(0.0, min(quiet_for, MAX_KEY_DEFER_S - waited))


class MarkdownText(Static):
    """Finished assistant text as ONE widget (Rich Markdown).

    Textual's Markdown widget mounts a widget per block; thousands of them make every layout
    pass slow. Stored messages and finished stream chunks use this instead.
    """

    def __init__(self, source: str) -> None:
        source = clean(source)  # model text: no control sequence reaches the terminal
        super().__init__(RichMarkdown(source), classes="assistant")
        self.source = source


def append_pause(now: float, started: float, ended: float, last_key: float, typing: bool) -> float:
    """How much longer to wait, at ``now``, before the append after the one that ran from
    ``started`` to ``ended`` (0: go now; ask again after a positive wait). Not ``typing``:
    ``APPEND_INTERVAL_S`` after it. Typing: as soon as a key came since it started
    (``key_defer`` then lets that key's echo go first), else ``TYPING_APPEND_INTERVAL_S`` after
    it. Monotonic seconds."""
    if not typing:
        return max(0.0, ended + APPEND_INTERVAL_S - now)
    if last_key > started:
        return 0.0
    return max(0.0, min(TYPING_POLL_S, ended + TYPING_APPEND_INTERVAL_S - now))


class AssistantMessage(Markdown):
    """Assistant text, streamed.

    Once finished, the blocks give way to one ``MarkdownText`` inside it (``_settle``).

    Deltas are buffered and appended in batches: while one ``Markdown.append`` runs, everything
    that arrives is joined into the next one, so the UI keeps up however fast the model streams
    (the same scheme as ``Markdown.get_stream``, with counters the bench reads for the backlog).
    Appends are at most ``APPEND_INTERVAL_S`` apart; while ``typing()`` says the user is typing,
    one follows each key, ``TYPING_APPEND_INTERVAL_S`` apart at most (``append_pause``); an
    append waits ``key_defer`` after each key (``last_key()``: when it was typed), so the
    input's echo goes first.
    """

    def __init__(
        self,
        text: str = "",
        stats: StreamStats | None = None,
        fence: FenceTracker | None = None,
        typing: Callable[[], bool] = lambda: False,
        last_key: Callable[[], float] = lambda: 0.0,
    ) -> None:
        super().__init__(clean(text), classes="assistant")
        self._pending: list[str] = []
        self._wake = asyncio.Event()
        self._stream_task: asyncio.Task[None] | None = None
        self.stats = stats if stats is not None else StreamStats()
        self.received = 0  # deltas handed to feed()
        self.rendered = 0  # deltas whose append has completed
        self.fed_chars = 0
        self.fence = fence if fence is not None else FenceTracker()  # carried to the next part
        self._neutralizer = StreamNeutralizer()
        self.typing = typing
        self.last_key = last_key
        self.separator = ""  # what the last cut (``split``) took out between the parts

    @property
    def backlog(self) -> int:
        """Deltas received but not yet rendered."""
        return self.received - self.rendered

    def split(self, text: str) -> tuple[str, str] | None:
        """Where this answer should go on in a fresh widget (``stream_split``): ``(head, tail)``
        or None. Call once per delta, before :meth:`feed`."""
        cut = cut_point(self.fed_chars, self.fence, text)
        if cut is None:
            return None
        head, self.separator, tail = cut
        return head, tail

    def feed(self, text: str) -> None:
        """Queue a text delta; cheap, never awaits."""
        # Model text: no control sequence reaches the terminal, even one split across deltas.
        self._queue(self._neutralizer.feed(text))

    def _queue(self, text: str) -> None:
        if not text:
            return
        self._pending.append(text)
        self.received += 1
        self.stats.received += 1
        self.fed_chars += len(text)
        self._wake.set()
        if self._stream_task is None:
            self._stream_task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                if not self._pending:
                    continue
                await self.key_quiet()
                batch, self._pending = self._pending, []
                started = time.monotonic()
                await asyncio.shield(self.append("".join(batch)))
                self.rendered += len(batch)
                self.stats.rendered += len(batch)
                # at most ~20 appends a second, while typing one after each key: each is a
                # re-layout, and a key that arrives meanwhile waits behind it
                ended = time.monotonic()
                while pause := append_pause(
                    time.monotonic(), started, ended, self.last_key(), self.typing()
                ):
                    await asyncio.sleep(pause)
        except asyncio.CancelledError:
            pass
        if self._pending:
            batch, self._pending = self._pending, []
            await self.append("".join(batch))
            self.rendered += len(batch)
            self.stats.rendered += len(batch)

    async def key_quiet(self) -> None:
        """Wait while a key was just typed (``key_defer``): before an append, and before a
        finished part's lines move into ``tui.settled`` (both re-lay out the conversation)."""
        waited = 0.0
        while (delay := key_defer(time.monotonic(), self.last_key(), waited)) > 0:
            await asyncio.sleep(delay)
            waited += delay

    async def finish(self, *, settle: bool = True) -> None:
        """Render whatever is queued, stop the updater, then ``_settle`` (unless not
        ``settle``: a finished part of a longer answer goes to ``tui.settled`` instead)."""
        self._queue(self._neutralizer.flush())  # a sequence the answer never closed
        task, self._stream_task = self._stream_task, None
        if task is not None:
            # Let the updater drain before cancelling it, so the tail is never lost.
            while self.rendered < self.received and not task.done():
                await asyncio.sleep(0.005)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if settle:
            await self._settle()

    async def _settle(self) -> None:
        """The finished text as ONE ``MarkdownText`` inside this widget, painted as a stored
        message is: ``nerve -c`` shows a table, code, lists exactly as they were; one widget
        instead of one per block. This widget stays (with the ``assistant`` class and the
        ``source``), so nothing is replaced in the conversation."""
        if not self.is_attached or not self.source.strip():
            return
        inner = MarkdownText(self.source)
        inner.set_classes("settled")  # the text of this message, not another message
        await self.remove_children()
        await self.mount(inner)
