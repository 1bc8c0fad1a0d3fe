"""The app's keys at the top level: Ctrl+C, Ctrl+D, Shift+Tab, Esc (and Esc Esc at rest).

``KeyActions`` is a part of ``NerveApp``: the app's ``action_*`` methods and ``check_action``
hand the keys to it; it keeps when each key was last pressed, for the double presses.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.screen import ModalScreen

if TYPE_CHECKING:
    from agent_cli.tui.app import NerveApp

__all__ = ["APP_KEY_ACTIONS", "CTRL_D_WINDOW_S", "ESC_ESC_WINDOW_S", "KeyActions"]

APP_KEY_ACTIONS = frozenset({"ctrl_c", "ctrl_d", "cycle_mode", "interrupt"})
CTRL_D_WINDOW_S = 1.0
ESC_ESC_WINDOW_S = 0.8  # Esc twice on an empty prompt opens /rewind


class KeyActions:
    """``allowed`` says whether an app key acts now; ``ctrl_c``, ``ctrl_d``, ``cycle_mode`` and
    ``escape`` act."""

    def __init__(self, app: NerveApp) -> None:
        self._app = app
        self._last_escape = 0.0
        self._last_ctrl_c = 0.0
        self._last_ctrl_d = 0.0

    def allowed(self, action: str) -> bool:
        """While a modal is up, the app's keys belong to it."""
        if action in APP_KEY_ACTIONS:
            return not isinstance(self._app.screen, ModalScreen)
        return True

    def cycle_mode(self) -> None:
        """Shift+Tab: the next permission mode."""
        app = self._app
        if not app.session_ready:
            app.notify("The session is not ready yet", timeout=2)
            return
        app.session.cycle_mode()
        app.refresh_status()

    def escape(self) -> None:
        """Interrupt the running turn; at rest, Esc twice on an empty prompt opens /rewind."""
        if self._app.turns.running:
            self._app.turns.interrupt()
        else:
            self._escape_at_rest()

    def ctrl_c(self) -> None:
        """Clear a draft; else interrupt a turn; else exit when pressed twice."""
        app = self._app
        now = time.monotonic()
        if app.prompt_input.text:
            self._last_ctrl_c = 0.0
            app.prompt_input.clear()
        elif app.turns.running:
            self._last_ctrl_c = 0.0
            self.escape()
        elif now - self._last_ctrl_c <= CTRL_D_WINDOW_S:
            app.exit(0)
        else:
            self._last_ctrl_c = now
            app.notify("Press Ctrl+C again to exit", timeout=CTRL_D_WINDOW_S)

    def ctrl_d(self) -> None:
        """Exit when pressed twice on an empty input; a draft is never lost to Ctrl+D."""
        app = self._app
        if app.prompt_input.text:
            self._last_ctrl_d = 0.0
            return
        now = time.monotonic()
        if now - self._last_ctrl_d <= CTRL_D_WINDOW_S:
            app.exit(0)
            return
        self._last_ctrl_d = now
        app.notify("Press Ctrl+D again to exit", timeout=CTRL_D_WINDOW_S)

    def _escape_at_rest(self) -> None:
        app = self._app
        now = time.monotonic()
        if app.prompt_input.text or not app.session_ready:
            self._last_escape = 0.0
            return
        if now - self._last_escape <= ESC_ESC_WINDOW_S:
            self._last_escape = 0.0
            app.run_worker(app.slash_host.run("rewind", ""), group="rewind")
            return
        self._last_escape = now
