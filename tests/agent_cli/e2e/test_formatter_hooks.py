"""Formatter hooks through a real ``nerve -p`` (issue 12 item 4): a PostToolUse hook that
rewrites the file Nerve just wrote does not break the next Edit, and the model is told; a change
made by anyone else afterwards still makes Edit refuse."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness

FORMATTER = """\
import json, re, sys
path = json.load(sys.stdin)["tool_input"]["file_path"]
with open(path) as f:
    src = f.read()
with open(path, "w") as f:
    f.write(re.sub(r"\\s*=\\s*", " = ", src))
"""


def _result(body: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
    for message in body["messages"]:
        if isinstance(message["content"], list):
            for b in message["content"]:
                if b.get("tool_use_id") == tool_use_id:
                    return dict(b)
    raise AssertionError(f"no result for {tool_use_id}")


def test_edit_after_a_formatter_hook_works_and_a_later_change_still_refuses(
    harness: Harness,
) -> None:
    script = harness.root / "fmt.py"
    script.write_text(FORMATTER)
    settings = Path(harness.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    command = f'"{sys.executable}" "{script}"'
    settings.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(echo *)"]},
                "hooks": {
                    "PostToolUse": [
                        {
                            "matcher": "Write|Edit",
                            "hooks": [{"type": "command", "command": command}],
                        }
                    ]
                },
            }
        )
    )
    f = harness.project / "a.py"
    scenario = Scenario.of(
        Turn([tool_use("Write", {"file_path": str(f), "content": "x=1\ny=2\n"}, id="t_w")]),
        Turn(
            [
                tool_use(
                    "Edit",
                    {"file_path": str(f), "old_string": "y = 2", "new_string": "y = 3"},
                    id="t_e",
                )
            ],
            match=Match(tool_result_for="t_w"),
        ),
        Turn(
            [tool_use("Bash", {"command": f'echo "z = 9" >> "{f}"'}, id="t_b")],
            match=Match(tool_result_for="t_e"),
        ),
        Turn(
            [
                tool_use(
                    "Edit",
                    {"file_path": str(f), "old_string": "x = 1", "new_string": "x = 0"},
                    id="t_e2",
                )
            ],
            match=Match(tool_result_for="t_b"),
        ),
        Turn([text("done")], match=Match(tool_result_for="t_e2")),
    )
    run = harness.run(["-p", "go", "--permission-mode", "acceptEdits"], scenario)
    assert run.rc == 0, run.stderr
    bodies = [r.body for r in run.server.requests]
    # the model was told after the Write that the hook changed the file, with the change
    after_write = json.dumps(bodies[1]["messages"][-1])
    assert "was changed by a PostToolUse hook" in after_write and "+x = 1" in after_write
    # the Edit on the formatted text worked
    edit = _result(bodies[2], "t_e")
    assert not edit.get("is_error"), edit
    # the Edit's own hook run changed nothing more: no second reminder
    assert "was changed by a PostToolUse hook" not in json.dumps(bodies[2]["messages"][-1])
    # Bash (not a hook of a write) changed it: the next Edit refuses, the file keeps z = 9
    refused = _result(bodies[4], "t_e2")
    assert refused.get("is_error"), refused
    assert f.read_text() == "x = 1\ny = 3\nz = 9\n"
