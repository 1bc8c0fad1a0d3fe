"""The Textual TUI. Importing this package does not import Textual; ``run_tui`` does."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_cli.session_api import SessionPort

__all__ = ["run_tui"]


def run_tui(session: SessionPort, *, bypass_available: bool = False) -> int:
    """Run the interactive app on ``session`` until the user exits; returns the exit code."""
    from agent_cli.tui.app import NerveApp

    app = NerveApp(session, bypass_available=bypass_available)
    app.run()
    return app.return_code or 0
