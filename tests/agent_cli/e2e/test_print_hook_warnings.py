"""Hook warnings in print mode reach stderr in every output format; json keeps stdout to its one
result object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness


def _hooks(harness: Harness) -> None:
    says = harness.root / "says.sh"
    says.write_text(
        '#!/bin/sh\ncat > /dev/null\necho \'{"systemMessage": "lint hook: 3 issues"}\'\n'
    )
    fails = harness.root / "fails.sh"
    fails.write_text("#!/bin/sh\ncat > /dev/null\necho 'boom: no such linter' >&2\nexit 1\n")
    for script in (says, fails):
        script.chmod(0o755)
    hooks = [{"type": "command", "command": str(says)}, {"type": "command", "command": str(fails)}]
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}
    config = Path(harness.env["NERVE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps(settings))


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_hook_messages_and_failures_reach_stderr(harness: Harness, fmt: str) -> None:
    _hooks(harness)
    run = harness.run(
        ["-p", "go", "--output-format", fmt, "--permission-mode", "bypassPermissions"],
        Scenario.of(
            Turn([tool_use("Bash", {"command": "echo hi"}, id="t1")]),
            Turn([text("Done.")], match=Match(tool_result_for="t1")),
        ),
    )
    assert run.rc == 0, run.stderr
    assert "lint hook: 3 issues" in run.stderr
    assert "boom: no such linter" in run.stderr
    if fmt == "json":
        [line] = run.stdout.strip().splitlines()
        assert json.loads(line)["result"] == "Done."
