"""``nerve -p`` end to end: a repository's ``core.fsmonitor`` never runs behind the user's back.

The project (or a repository nested in it) names a program in ``core.fsmonitor``, which git
starts on ``git status``: as a folder handed over as an archive could. Each test first shows that
a plain ``git status`` there does run it, so a canary that stays absent means something.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _plant_fsmonitor(repo: Path, canary: Path) -> None:
    """``git init`` ``repo`` with a core.fsmonitor writing ``canary``; prove git runs it."""
    repo.mkdir(exist_ok=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "core.fsmonitor", f"touch {canary}; false")
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert canary.exists(), "git did not run the planted fsmonitor: the test would prove nothing"
    canary.unlink()


def _tool_results(body: dict) -> dict[str, dict]:
    last = body["messages"][-1]
    return {b["tool_use_id"]: b for b in last["content"] if b.get("type") == "tool_result"}


def test_git_c_into_a_nested_repository_is_not_auto_allowed(harness: Harness) -> None:
    canary = harness.root / "CANARY"
    _git(harness.project, "init", "-q", "-b", "main")
    _plant_fsmonitor(harness.project / "sub", canary)
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "git -C sub status"}, id="t1")]),
        Turn([text("done")], match=Match(tool_result_for="t1")),
    )
    run = harness.run(["-p", "status of sub", "--output-format", "json"], scenario)
    assert run.rc == 0, run.stderr
    assert not canary.exists()
    denied = {d["tool_use_id"] for d in run.json()["permission_denials"]}
    assert denied == {"t1"}  # print mode answers the ask with a denial
    result = _tool_results(run.server.requests[1].body)["t1"]
    assert result["is_error"]


def test_a_start_in_a_repository_with_a_planted_fsmonitor_does_not_run_it(
    harness: Harness,
) -> None:
    canary = harness.root / "CANARY"
    _plant_fsmonitor(harness.project, canary)
    (harness.project / "a.txt").write_text("x\n")
    run = harness.run(["-p", "hi", "--output-format", "json"], Scenario.of(Turn([text("hi")])))
    assert run.rc == 0, run.stderr
    assert not canary.exists()
    # the probe still works with the pinned configuration
    system = json.dumps(run.server.requests[0].body.get("system"))
    assert "Current git branch: main" in system and "a.txt" in system


def test_an_approved_git_command_still_runs_no_fsmonitor(harness: Harness) -> None:
    """bypassPermissions runs what asks (the check is classifier-approvable); the Bash tool's
    environment pins core.fsmonitor=false, so the nested repository's program still does not
    run, while git itself does."""
    canary = harness.root / "CANARY"
    _git(harness.project, "init", "-q", "-b", "main")
    _plant_fsmonitor(harness.project / "sub", canary)
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "git -C sub status"}, id="t1")]),
        Turn([text("done")], match=Match(tool_result_for="t1")),
    )
    run = harness.run(
        ["-p", "status", "--output-format", "json", "--permission-mode", "bypassPermissions"],
        scenario,
    )
    assert run.rc == 0, run.stderr
    assert not canary.exists()
    result = _tool_results(run.server.requests[1].body)["t1"]
    assert "On branch main" in json.dumps(result["content"])
