"""Start-up budget (issue 11): what the TUI's first frame does not load.

A fresh interpreter imports the app module the way ``nerve`` does before its first frame and
lists ``sys.modules``: the agent's event classes, the session build, the model SDK, YAML,
pydantic, the Markdown parsers and the built-in slash commands come later (after the first frame, or on first use).
"""

from __future__ import annotations

import subprocess
import sys

LATER = (
    "agent_cli.loop.events",
    "agent_cli.session.agent_session",
    "agent_cli.session.build",
    "agent_cli.tui.widgets.markdown",
    "agent_cli.slash.builtin",  # the built-in slash commands: on the first "/" or command
    "anthropic",
    "httpx",
    "yaml",
    "pydantic",
    "markdown_it",
    "pygments",
)

CODE = (
    "import sys\n"
    "import agent_cli.tui.app\n"
    "from agent_cli.tui import run_tui\n"
    f"print('LOADED', sorted(m for m in sys.modules if m in {LATER!r}))\n"
)


def test_the_first_frame_does_not_import_what_it_does_not_paint() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "LOADED []" in proc.stdout, proc.stdout
