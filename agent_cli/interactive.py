"""``nerve`` without -p: build a session and open the TUI."""

from __future__ import annotations

import asyncio
import sys

from agent_cli.options import RunOptions

__all__ = ["run_interactive"]


def run_interactive(options: RunOptions) -> int:
    from agent_cli.model.config import MissingApiKey
    from agent_cli.session import AgentSession, SessionError

    try:
        session = AgentSession.create(options, interactive=True)
    except MissingApiKey as exc:
        print(f"nerve: {exc}", file=sys.stderr)
        return 1
    except (SessionError, ValueError) as exc:
        print(f"nerve: {exc}", file=sys.stderr)
        return 1
    try:
        from agent_cli.tui import run_tui
    except ImportError as exc:  # pragma: no cover - the TUI ships with the package
        print(f"nerve: the interactive app is unavailable ({exc}); use -p", file=sys.stderr)
        asyncio.run(session.close())
        return 1
    return run_tui(session, bypass_available=session.ctx.permissions.bypass_available)
