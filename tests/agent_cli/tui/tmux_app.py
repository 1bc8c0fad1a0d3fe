"""Started by the tmux test: serve a scenario on 127.0.0.1 and run the real TUI against it.

usage: python tmux_app.py SCENARIO.json PROJECT_DIR
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> int:
    scenario_path, project = Path(sys.argv[1]), Path(sys.argv[2])
    from agent_cli.options import RunOptions
    from agent_cli.session.agent_session import AgentSession
    from agent_cli.testing import Scenario, ScriptedServer
    from agent_cli.tui import run_tui

    server = ScriptedServer(Scenario.from_json(scenario_path)).start()
    os.environ["ANTHROPIC_BASE_URL"] = server.base_url
    try:
        # As ``nerve`` does: the first frame first, the session built in a thread behind it.
        return run_tui(
            session_factory=lambda: AgentSession.create(RunOptions(), cwd=project, interactive=True)
        )
    finally:
        server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
