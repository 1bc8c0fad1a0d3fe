"""``nerve -p /config``: the effective settings and the file each comes from, as text."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.testing import Scenario
from tests.agent_cli.e2e.conftest import Harness, harness  # noqa: F401 (the fixture)


def test_config_lists_each_setting_with_its_file(harness: Harness) -> None:  # noqa: F811
    local = harness.project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"model": "claude-config-test"}))
    user = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"model": "claude-loses", "cleanupPeriodDays": 3}))
    run = harness.run(["-p", "/config"], Scenario.of())
    assert run.rc == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "Settings (highest-precedence file first):"
    # the highest layer wins, and the line says which it beat
    assert f'  model = "claude-config-test"  ({local}; overrides ~/.claude/settings.json)' in lines
    assert "  cleanupPeriodDays = 3  (~/.claude/settings.json)" in lines, lines
    assert run.server.requests == []


def test_config_with_arguments_says_how_to_set(harness: Harness) -> None:  # noqa: F811
    run = harness.run(["-p", "/config model"], Scenario.of())
    assert (
        "usage: /config (to set a value: nerve config set [-g] KEY VALUE)"
        in run.stdout + run.stderr
    )
