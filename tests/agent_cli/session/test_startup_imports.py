"""Start-up budget (issue 11): what ``nerve -p`` does not load until it is used.

A real ``nerve -p`` process against the scripted server lists its ``sys.modules`` at exit: the
auto-mode classifier is not among them. The session builds it on first use, with the settings
and environment of the start (tests/agent_cli/session/test_environment.py) and classifies as
before in auto mode (tests/agent_cli/auto/test_classifier.py).
"""

from __future__ import annotations

import subprocess
import sys

from agent_cli.testing import Scenario, text
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]

LATER = ("agent_cli.auto.classifier", "agent_cli.auto.classifier_prompt")

CODE = (
    "import sys\n"
    "from agent_cli.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    f"print('LOADED', sorted(m for m in sys.modules if m in {LATER!r}))\n"
    "print('RC', rc)\n"
)


def _run(harness: Harness, *args: str) -> str:
    server = harness.server(Scenario.of([text("lean")]))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CODE, *args],
            cwd=harness.project,
            env=harness.env_for(server),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    server.assert_done()
    assert "lean" in proc.stdout and "RC 0" in proc.stdout, proc.stderr
    return proc.stdout


def test_print_mode_does_not_import_the_auto_mode_classifier(harness: Harness) -> None:
    assert "LOADED []" in _run(harness, "-p", "hi")
