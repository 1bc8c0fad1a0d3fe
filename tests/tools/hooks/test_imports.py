"""Start-up budget (issue 11): building the hooks of a session does not import httpx.

HTTP hooks import it on their first request (tests/agent_cli/e2e/test_hooks_http.py runs them
against a real server); a fresh interpreter that imports the hook runner must not have it.
"""

from __future__ import annotations

import subprocess
import sys

CODE = "import sys\nimport tools.hooks.runner\nprint('HTTPX', 'httpx' in sys.modules)\n"


def test_the_hook_runner_imports_httpx_only_when_an_http_hook_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "HTTPX False" in proc.stdout, proc.stdout
