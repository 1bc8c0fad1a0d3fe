"""Garbage collection that keeps out of the way of keystrokes.

A full (generation 2) collection walks every live object not frozen: the app's widgets, the
Rich and Textual render caches of everything on screen (Textual makes some 15 objects per
rendered line), the conversation. While 10,000 streamed lines pile up that is ~500,000 objects,
and Python started a full collection every second or so, each stopping the event loop for
50-230 ms: those pauses were the p99 of keystroke-to-echo (``bench/keystroke.py``). So while
the app runs, :class:`IdleCollector` owns generation 2 (young generations are still collected
automatically and free most garbage), and when a full collection is due (as many
generation-1 collections as Python's own threshold) it runs from the app's timer:

* while the user types (a key in the last ``idle_s``): the young generations are collected and
  the survivors frozen (``gc.freeze``, which only relinks lists): ~1 ms, whatever the heap;
* otherwise: a full collection, then the survivors are frozen, so it walks only what is new
  since the last freeze and stays short however long the conversation grows;
* what was frozen and has since died is reclaimed by a deep collection (unfreeze, collect,
  freeze) once the app is quiet (no turn running, no key for ``deep_idle_s``) and something
  was frozen since the last one (start-up's freeze does not count).

Nothing here measures the frozen set: ``gc.get_freeze_count`` walks it (~35 ms at 500,000).

``uninstall`` puts the thresholds back (tests run many apps in one process).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

__all__ = ["CHECK_INTERVAL_S", "IdleCollector"]

CHECK_INTERVAL_S = 0.5  # how often the app's timer calls ``tick``
_NEVER = 2**31 - 1  # a generation-2 threshold the count never reaches


class IdleCollector:
    """Owns generation 2 while installed: collects it from :meth:`tick`, between keystrokes."""

    def __init__(
        self,
        last_key: Callable[[], float],
        busy: Callable[[], bool] = lambda: False,
        *,
        idle_s: float = 1.0,
        deep_idle_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.last_key = last_key  # monotonic time of the last keystroke (0.0: none yet)
        self.busy = busy  # a turn is running
        self.idle_s = idle_s
        self.deep_idle_s = deep_idle_s
        self.clock = clock
        self.collections = 0  # young and full collections run by tick()
        self.deep_collections = 0
        self._saved: tuple[int, int, int] | None = None
        self._collections_at_deep = 0  # ``collections`` when the last deep one ran

    @property
    def installed(self) -> bool:
        return self._saved is not None

    @property
    def due_after(self) -> int:
        """Generation-1 collections since the last full one that make a full one due."""
        threshold = self._saved[2] if self._saved is not None else gc.get_threshold()[2]
        return max(1, threshold)

    def typing(self) -> bool:
        """Whether the user typed in the last ``idle_s`` (the streamed answer also asks)."""
        return self.clock() - self.last_key() < self.idle_s

    def install(self) -> None:
        """Turn the automatic full collection off (young generations are unchanged)."""
        if self._saved is None:
            self._saved = gc.get_threshold()
            gen0, gen1, _ = self._saved
            gc.set_threshold(gen0, gen1, _NEVER)

    def uninstall(self) -> None:
        """Put the thresholds back as they were before :meth:`install`."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def tick(self) -> str | None:
        """Collect if a collection is due; returns what ran (``"young"``, ``"full"``,
        ``"deep"``) or None."""
        if self._saved is None or not gc.isenabled():  # start-up's pause (gc_pause) wins
            return None
        quiet_for = self.clock() - self.last_key()
        froze = self.collections > self._collections_at_deep
        if froze and quiet_for >= self.deep_idle_s and not self.busy():
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._collections_at_deep = self.collections
            self.deep_collections += 1
            return "deep"
        if gc.get_count()[2] < self.due_after:
            return None
        kind = "young" if self.typing() else "full"
        gc.collect(1 if kind == "young" else 2)
        gc.freeze()
        self.collections += 1
        return kind
