"""The app's keys at the top level: Ctrl+C, Ctrl+D, Shift+Tab, Esc (and Esc Esc at rest).

``KeyActions`` sits between ``SessionHost`` and ``NerveApp``; what it needs from the app is
declared here and provided there.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from textual.screen import ModalScreen

from agent_cli.tui.slash_host import run_slash
from agent_cli.tui.startup import SessionHost

if TYPE_CHECKING:
    from agent_cli.tui.app import NerveApp

__all__ = ["CTRL_D_WINDOW_S", "ESC_ESC_WINDOW_S", "FORCE_STOP_S", "KeyActions"]

CTRL_D_WINDOW_S = 1.0
ESC_ESC_WINDOW_S = 0.8  # Esc twice on an empty prompt opens /rewind
FORCE_STOP_S = 3.0


class KeyActions(SessionHost):
    """Key actions over the app's input, turn state and session (see ``NerveApp``)."""

    prompt_input: Any
    turn_running: bool
    interrupted: bool
    _last_escape: float
    _last_ctrl_c: float
    _last_ctrl_d: float

    def refresh_status(self) -> None: ...

    def mark_interrupted(self) -> None: ...

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While a modal is up, the app's keys belong to it.
        if action in ("ctrl_c", "ctrl_d", "cycle_mode", "interrupt"):
            return not isinstance(self.screen, ModalScreen)
        return True

    def action_cycle_mode(self) -> None:
        if not self.session_ready:
            self.notify("The session is not ready yet", timeout=2)
            return
        self.session.cycle_mode()
        self.refresh_status()

    def action_interrupt(self) -> None:
        if not self.turn_running:
            self._escape_at_rest()
            return
        self.session.abort()
        self.mark_interrupted()
        self.set_timer(FORCE_STOP_S, self._force_stop)

    def _escape_at_rest(self) -> None:
        """Esc twice on an empty prompt: /rewind."""
        now = time.monotonic()
        if self.prompt_input.text or not self.session_ready:
            self._last_escape = 0.0
            return
        if now - self._last_escape <= ESC_ESC_WINDOW_S:
            self._last_escape = 0.0
            self.run_worker(run_slash(cast("NerveApp", self), "rewind", ""), group="rewind")
            return
        self._last_escape = now

    def _force_stop(self) -> None:
        if self.turn_running and self.interrupted:
            self.workers.cancel_group(self, "turn")

    def action_ctrl_c(self) -> None:
        """Clear a draft; else interrupt a turn; else exit when pressed twice."""
        now = time.monotonic()
        if self.prompt_input.text:
            self._last_ctrl_c = 0.0
            self.prompt_input.clear()
        elif self.turn_running:
            self._last_ctrl_c = 0.0
            self.action_interrupt()
        elif now - self._last_ctrl_c <= CTRL_D_WINDOW_S:
            self.exit(0)
        else:
            self._last_ctrl_c = now
            self.notify("Press Ctrl+C again to exit", timeout=CTRL_D_WINDOW_S)

    def action_ctrl_d(self) -> None:
        """Exit when pressed twice on an empty input; a draft is never lost to Ctrl+D."""
        if self.prompt_input.text:
            self._last_ctrl_d = 0.0
            return
        now = time.monotonic()
        if now - self._last_ctrl_d <= CTRL_D_WINDOW_S:
            self.exit(0)
            return
        self._last_ctrl_d = now
        self.notify("Press Ctrl+D again to exit", timeout=CTRL_D_WINDOW_S)
