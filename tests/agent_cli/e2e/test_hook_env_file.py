"""``CLAUDE_ENV_FILE`` through a real ``nerve -p`` (issue 12 item 1): what a SessionStart hook
writes there is exported into the Bash commands that follow."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness


def test_session_start_env_file_reaches_later_bash_commands(harness: Harness) -> None:
    settings = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    hook = (
        'test -n "$CLAUDE_ENV_FILE" && echo "export NERVE_FROM_HOOK=hello" >> "$CLAUDE_ENV_FILE"'
        ' && echo \'export PATH="$PATH:/opt/from-hook"\' >> "$CLAUDE_ENV_FILE"'
    )
    settings.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(echo *)"]},
                "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": hook}]}]},
            }
        )
    )
    out = harness.root / "seen.txt"
    command = f'echo "$NERVE_FROM_HOOK $PATH" > "{out}"'
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": command}, id="t_bash")]),
        Turn([text("done")], match=Match(tool_result_for="t_bash")),
    )
    run = harness.run(["-p", "go", "--permission-mode", "bypassPermissions"], scenario)
    assert run.rc == 0, run.stderr
    value, path = out.read_text().split()
    assert value == "hello"
    assert path.endswith(":/opt/from-hook") and len(path) > len(":/opt/from-hook")
