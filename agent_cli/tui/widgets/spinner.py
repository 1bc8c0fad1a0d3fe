"""The working line above the input: shown while a turn runs, gone when it ends.

``✻ Working… (12s · ↓ 340 tokens · esc to interrupt)``; while the model client waits to retry,
the endpoint, the reason and a countdown to the next attempt instead. The text is a pure function
of the state and the clock (``working_text``), so it is tested without waiting.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from textual.timer import Timer
from textual.widgets import Static

from agent_cli.tui.safe import plain_text
from tools.records import datarecord

__all__ = ["CHARS_PER_TOKEN", "TICK_S", "RetryState", "WorkingLine", "WorkingState", "working_text"]

FRAMES = "·✢✳✶✻✽✻✶✳✢"
TICK_S = 0.2  # how often the line redraws while shown (elapsed time, countdown, frame)
# Output tokens are estimated from what streamed (the exact count comes with the usage at the
# end of each request, in the status line).
CHARS_PER_TOKEN = 4


@datarecord
class RetryState:
    """The client's last retry announcement: the attempt that failed and when the next starts."""

    attempt: int
    max_attempts: int
    reason: str
    endpoint: str
    next_at: float  # monotonic time of the next attempt


@datarecord
class WorkingState:
    """What the working line shows, with the monotonic time the turn started."""

    started: float
    chars: int = 0
    retry: RetryState | None = None
    verb: str = "Working"


def _tokens(chars: int) -> str:
    n = chars // CHARS_PER_TOKEN
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _duration(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}m {s % 60:02d}s" if s >= 60 else f"{s}s"


def working_text(state: WorkingState, now: float) -> str:
    """The line for ``state`` at monotonic time ``now``."""
    frame = FRAMES[int((now - state.started) / TICK_S) % len(FRAMES)]
    elapsed = _duration(max(0.0, now - state.started))
    r = state.retry
    if r is not None:
        attempt = f"attempt {r.attempt + 1}" + (f"/{r.max_attempts}" if r.max_attempts else "")
        left = r.next_at - now
        when = f"in {int(left + 0.999)}s" if left > 0 else "now"
        where = f" {r.endpoint}" if r.endpoint else ""
        return f"{frame} Retrying{where} {when} ({attempt}) · {r.reason} · {elapsed} · esc to interrupt"
    parts = [elapsed]
    if state.chars:
        parts.append(f"↓ {_tokens(state.chars)} tokens")
    parts.append("esc to interrupt")
    return f"{frame} {state.verb}… ({' · '.join(parts)})"


class WorkingLine(Static):
    """The working line; hidden at rest. The app calls ``start``/``stop`` around a turn."""

    def __init__(self) -> None:
        super().__init__("", markup=False, id="working")
        self.display = False
        self.state: WorkingState | None = None
        self._timer: Timer | None = None

    @property
    def text(self) -> str:
        """What the line shows now ("" when hidden)."""
        return working_text(self.state, time.monotonic()) if self.state is not None else ""

    def start(self, verb: str = "Working") -> None:
        self.state = WorkingState(time.monotonic(), verb=verb)
        self.display = True
        if self._timer is None:
            self._timer = self.set_interval(TICK_S, self.tick)
        self.tick()

    def stop(self) -> None:
        self.state = None
        self.display = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    @contextmanager
    def hidden(self) -> Iterator[None]:
        """Hide the line while the app waits for the user (a prompt is not the model working)."""
        shown = self.display
        self.display = False
        try:
            yield
        finally:
            self.display = shown and self.state is not None

    def streamed(self, chars: int) -> None:
        """``chars`` more characters came from the model: the model is answering again."""
        if self.state is not None:
            self.state.chars += chars
            self.state.retry = None

    def retrying(
        self, attempt: int, max_attempts: int, delay_s: float, reason: str, endpoint: str
    ) -> None:
        if self.state is not None:
            next_at = time.monotonic() + delay_s
            self.state.retry = RetryState(attempt, max_attempts, reason, endpoint, next_at)
            self.tick()

    def tick(self) -> None:
        if self.state is not None:
            # one line high (tui/styles.py): a new text never changes the layout, and a
            # re-layout every tick would repaint the whole conversation while it streams
            self.update(plain_text(self.text), layout=False)
