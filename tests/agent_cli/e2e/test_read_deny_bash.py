"""A ``Read`` deny rule holds against a recursive read through Bash, end to end (issue 32,
item 4): a real ``nerve -p`` with ``permissions.deny: ["Read(./secrets/**)"]`` in a settings
file; the scripted model runs ``grep -r PASSWORD .`` and the secret never reaches it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness

SECRET = "hunter2-do-not-leak"


def _results(body: dict[str, Any]) -> dict[str, str]:
    last = body["messages"][-1]
    out: dict[str, str] = {}
    for b in last["content"]:
        if b.get("type") == "tool_result":
            content = b["content"]
            if isinstance(content, list):
                content = "".join(c.get("text", "") for c in content)
            out[b["tool_use_id"]] = str(content)
    return out


@pytest.mark.parametrize("mode", ["default", "dontAsk", "bypassPermissions"])
def test_grep_r_over_a_folder_holding_denied_secrets_never_shows_them(
    harness: Harness, mode: str
) -> None:
    (harness.project / "secrets").mkdir()
    (harness.project / "secrets" / "prod.env").write_text(f"PASSWORD={SECRET}\n")
    (harness.project / "app.py").write_text("PASSWORD = os.environ['PASSWORD']\n")
    settings = harness.root / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Read(./secrets/**)"]}}))
    scenario = Scenario.of(
        Turn(
            [
                tool_use("Bash", {"command": "grep -r PASSWORD ."}, id="t_tree"),
                # a control: the same search over a file the rule does not cover runs
                tool_use("Bash", {"command": "grep PASSWORD app.py"}, id="t_file"),
            ]
        ),
        Turn([text("done")], match=Match(tool_result_for="t_file")),
    )
    args = ["-p", "find the password", "--settings", str(settings), "--output-format", "json"]
    run = harness.run([*args, "--permission-mode", mode], scenario)
    assert run.rc == 0, run.stderr
    results = _results(run.server.requests[1].body)
    assert "os.environ['PASSWORD']" in results["t_file"]  # Bash ran, and its output arrived
    tree = results["t_tree"]
    assert "denied" in tree and "Read(./secrets/**)" in tree, tree
    # the secret is nowhere in anything the model was sent, nor in what nerve printed
    assert all(SECRET not in json.dumps(r.body) for r in run.server.requests)
    assert SECRET not in run.stdout
    denied = {d["tool_use_id"] for d in run.json()["permission_denials"]}
    assert denied == {"t_tree"}


def test_without_the_rule_the_same_search_runs(harness: Harness) -> None:
    """The control for the test above: the harness does show a recursive grep's output."""
    (harness.project / "secrets").mkdir()
    (harness.project / "secrets" / "prod.env").write_text(f"PASSWORD={SECRET}\n")
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "grep -r PASSWORD ."}, id="t_tree")]),
        Turn([text("done")], match=Match(tool_result_for="t_tree")),
    )
    run = harness.run(["-p", "find the password", "--output-format", "json"], scenario)
    assert run.rc == 0, run.stderr
    assert SECRET in _results(run.server.requests[1].body)["t_tree"]
