"""The Textual TUI. Importing this package does not import Textual; ``run_tui`` does."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort

__all__ = ["FRAME_RATE", "SWITCH_INTERVAL_S", "run_tui", "use_frame_rate"]

# Frames a second at most (Textual's default is 60). A keystroke's echo is painted at the next
# frame tick after the key is handled, so the tick interval is part of every echo's latency:
# bench/keystroke.py, idle median 17 -> 11 ms and fewer slow echoes while an answer streams.
FRAME_RATE = 240
# How long a thread holding the interpreter runs before one that waits gets it (Python's default
# is 5 ms). The app's other threads (a finished part rendered off the loop, the session's
# build, Textual's key reader and writer) then hold up the event loop, and a key's echo, for
# 1 ms at a time, not 5 (bench/keystroke.py).
SWITCH_INTERVAL_S = 0.001


def use_frame_rate() -> None:
    """Have Textual paint up to ``FRAME_RATE`` frames a second, unless the user set
    ``TEXTUAL_FPS``. Call before Textual is imported (it reads the variable once, at import);
    the variable is not left in the environment, which the tools' commands inherit."""
    if "textual.constants" in sys.modules or "TEXTUAL_FPS" in os.environ:
        return
    os.environ["TEXTUAL_FPS"] = str(FRAME_RATE)
    try:
        import textual.constants  # noqa: F401  (reads TEXTUAL_FPS)
    finally:
        os.environ.pop("TEXTUAL_FPS", None)


def run_tui(
    session: SessionPort | None = None,
    *,
    session_factory: Callable[[], SessionPort] | None = None,
    bypass_available: bool = False,
    open_resume_picker: bool = False,
) -> int:
    """Run the interactive app until the user exits; returns the exit code.

    Pass a ready ``session``, or a ``session_factory`` (sync, may be slow): the app then paints
    its first frame at once and builds the session in a thread (see ``agent_cli.tui.app``).
    """
    use_frame_rate()
    from agent_cli.tui.app import NerveApp

    app = NerveApp(
        session,
        session_factory=session_factory,
        bypass_available=bypass_available,
        open_resume_picker=open_resume_picker,
    )
    switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        app.run()
    finally:
        sys.setswitchinterval(switch)
    return app.return_code or 0
