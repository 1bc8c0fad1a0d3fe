"""The Textual TUI. Importing this package does not import Textual; ``run_tui`` does."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort

__all__ = ["run_tui"]


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
    from agent_cli.tui.app import NerveApp

    app = NerveApp(
        session,
        session_factory=session_factory,
        bypass_available=bypass_available,
        open_resume_picker=open_resume_picker,
    )
    app.run()
    return app.return_code or 0
