"""``nerve -p /status`` and ``nerve -p /doctor`` against the scripted server on 127.0.0.1.

The endpoint check opens a connection and sends nothing: the scripted server must see no
request at all (it fails loudly on any request it did not expect).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

from agent_cli import __version__
from agent_cli.testing import Scenario
from tests.agent_cli.e2e.conftest import Harness, harness  # noqa: F401 (the fixture)
from tests.tools.mcp.conftest import SERVERS


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_status_names_version_model_endpoint_mode_settings_and_mcp(harness: Harness) -> None:  # noqa: F811
    settings = harness.project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "claude-status-test"}))
    demo = str(SERVERS / "demo_server.py")
    added = harness.run(["mcp", "add", "calc", "--", sys.executable, demo], None)
    assert added.rc == 0, added.stderr

    run = harness.run(["-p", "/status", "--permission-mode", "acceptEdits"], Scenario.of())
    assert run.rc == 0, run.stderr
    lines = run.stdout.splitlines()
    assert f"Version: Nerve {__version__}" in lines
    assert f"cwd: {harness.project}" in lines
    assert "Model: claude-status-test" in lines
    assert f"Endpoint: {run.server.base_url}" in lines
    assert "Credential: API key (ANTHROPIC_API_KEY)" in lines
    assert "Permission mode: acceptEdits" in lines
    assert any(line.strip() == f"localSettings: {settings}" for line in lines), lines
    assert any(line.startswith("  calc (local, stdio): ") for line in lines), lines
    assert run.server.requests == []


def test_doctor_all_good_against_the_scripted_server(harness: Harness) -> None:  # noqa: F811
    run = harness.run(["-p", "/doctor"], Scenario.of())
    assert run.rc == 0, (run.stdout, run.stderr)
    out = run.stdout
    assert "✓ Credential: API key (ANTHROPIC_API_KEY)" in out
    assert f"✓ Endpoint: {run.server.base_url} reachable" in out
    assert "✓ ripgrep: ripgrep " in out
    assert "✓ git: git version " in out
    assert "bubblewrap: " in out  # works or a warning: the sandbox is off
    assert "✓ Settings: " in out and "no errors" in out
    assert out.rstrip().endswith(("No problems found.", "warning(s): bubblewrap."))
    # a connection was made (the check is real) but no HTTP request was sent
    assert run.server.requests == [] and run.server.failures == []


def test_doctor_reports_each_problem_and_exits_1(harness: Harness) -> None:  # noqa: F811
    broken = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"model": "x",\n  "permissions": {')
    ours = Path(harness.env["NERVE_CONFIG_DIR"]) / "settings.json"
    ours.parent.mkdir(parents=True)
    ours.write_text(json.dumps({"sandbox": {"enabled": True}}))
    port = _closed_port()
    harness.env.update(
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
        NERVE_SANDBOX_BWRAP=str(harness.root / "no-bwrap"),
    )
    run = harness.run(["-p", "/doctor"], None)
    assert run.rc == 1, (run.stdout, run.stderr)
    out = run.stdout
    assert f"✗ Endpoint: http://127.0.0.1:{port}: cannot connect" in out
    assert "✗ bubblewrap: bubblewrap (bwrap) is not installed" in out  # the sandbox is on
    assert "✗ Settings: ~/.claude/settings.json:2:" in out and "invalid JSON" in out
    assert "this file is ignored" in out
    assert "3 problem(s) found: Endpoint, bubblewrap, Settings." in run.stderr


def test_help_lists_both(harness: Harness) -> None:  # noqa: F811
    run = harness.run(["-p", "/help"], None)
    assert "/status" in run.stdout and "/doctor" in run.stdout
