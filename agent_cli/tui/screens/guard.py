"""The keystroke guard the permission and trust prompts share.

A prompt that appears while the user is typing must not take that typing as its answer: every
key is ignored for the first ``guard_s`` seconds after the screen is mounted.
"""

from __future__ import annotations

import time
from typing import TypeVar

from textual.screen import ModalScreen

__all__ = ["GuardedModal"]

ResultT = TypeVar("ResultT")


class GuardedModal(ModalScreen[ResultT]):
    """A modal whose key actions do nothing until ``guard_s`` seconds after it is shown.

    Subclasses call ``_start_guard()`` when mounted and begin each key action with
    ``if self._guarded(): return``; ``ignored_keys`` counts the keys the guard swallowed.
    """

    def __init__(self, *, guard_s: float = 0.5) -> None:
        super().__init__()
        self.guard_s = guard_s
        self.shown_at = float("inf")  # not shown yet: nothing is armed
        self.ignored_keys = 0

    def _start_guard(self) -> None:
        self.shown_at = time.monotonic()

    @property
    def armed(self) -> bool:
        """False during the guard period: keys then are typing meant for the prompt."""
        return time.monotonic() - self.shown_at >= self.guard_s

    def _guarded(self) -> bool:
        if self.armed:
            return False
        self.ignored_keys += 1
        return True
