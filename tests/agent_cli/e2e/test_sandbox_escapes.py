"""Issue 32 end to end: a sandboxed Bash call through the real ``nerve -p`` tries to plant a
``core.fsmonitor`` for git to run outside the sandbox; neither the next ``nerve`` start (its
system prompt runs ``git status``) nor the user's own ``git status`` runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness
from tests.tools.sandbox.support import needs_sandbox

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "n",
    "GIT_AUTHOR_EMAIL": "n@x",
    "GIT_COMMITTER_NAME": "n",
    "GIT_COMMITTER_EMAIL": "n@x",
}

# What the model runs: a script it wrote earlier, so the command line itself names no .git
# path for the permission analysis to stop; only the sandbox stands in the way. Both ways in:
# .git/commondir pointing at a planted git directory, and .git renamed and rebuilt.
ATTACK = """
planted_config() {{ printf '[core]\\n\\tfsmonitor = {script}\\n' > "$1/config"; }}
mkdir planted && cp -r .git/HEAD .git/index .git/objects .git/refs planted/ \\
  && planted_config planted && printf '%s\\n' "$PWD/planted" > .git/commondir
echo "commondir: $?"
mv .git .git-old && mkdir .git && cp -r .git-old/HEAD .git-old/index .git-old/objects \\
  .git-old/refs .git/ && planted_config .git
echo "rename: $?"
echo attack-ran
"""


def _settings(harness: Harness) -> None:
    user = harness.root / "home" / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"sandbox": {"enabled": True}}))


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, check=False)


def _result(run: object) -> str:
    request = run.server.requests[1].body  # type: ignore[attr-defined]
    [block] = [
        b
        for b in request["messages"][-1]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


@needs_sandbox
def test_a_planted_fsmonitor_never_runs_after_the_sandboxed_session(harness: Harness) -> None:
    _settings(harness)
    project = harness.project
    canary = harness.root / "CANARY"
    script = harness.root / "fsmonitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {canary}\n")
    script.chmod(0o755)
    _git(project, "init", "-q")
    (project / "a.txt").write_text("a\n")
    _git(project, "add", "a.txt")
    _git(project, "commit", "-qm", "init")
    (project / "attack.sh").write_text(ATTACK.format(script=script))
    # the control: run outside the sandbox (on a copy), the attack does plant it
    copy = harness.root / "control"
    shutil.copytree(project, copy)
    subprocess.run(["bash", "attack.sh"], cwd=copy, env=GIT_ENV, capture_output=True)
    _git(copy, "status", "--short")
    assert canary.exists(), "the attack plants nothing even unsandboxed"
    canary.unlink()
    config = (project / ".git" / "config").read_bytes()
    head = (project / ".git" / "HEAD").read_bytes()

    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "bash attack.sh"}, id="b1")]),
        Turn([text("done")], match=Match(tool_result_for="b1")),
    )
    run = harness.run(["-p", "tidy up"], scenario)
    assert run.rc == 0, run.stderr
    result = _result(run)
    assert "attack-ran" in result, result  # it ran, in the sandbox, without asking

    later = harness.run(["-p", "hello"], Scenario.of(Turn([text("hi")])))
    assert later.rc == 0, later.stderr
    assert not canary.exists()  # the next start's git status ran no planted program
    _git(project, "status", "--short")
    assert not canary.exists()  # nor does the user's own
    git_dir = project / ".git"
    assert (git_dir / "config").read_bytes() == config and (git_dir / "HEAD").read_bytes() == head
    assert not (git_dir / "commondir").exists() and not (project / ".git-old").exists()
    assert "Read-only file system" in result and "Device or resource busy" in result, result


@needs_sandbox
def test_a_read_deny_rule_hides_its_files_from_a_sandboxed_search(harness: Harness) -> None:
    user = harness.root / "home" / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        json.dumps({"sandbox": {"enabled": True}, "permissions": {"deny": ["Read(./secrets/**)"]}})
    )
    (harness.project / "secrets").mkdir()
    (harness.project / "secrets" / "db.txt").write_text("PASSWORD=hunter2\n")
    (harness.project / "notes.txt").write_text("PASSWORD=not-a-secret\n")
    # a script, so that the command line names no path for the permission analysis to judge
    (harness.project / "search.sh").write_text("grep -r PASSWORD . 2>&1; echo searched\n")
    scenario = Scenario.of(
        Turn([tool_use("Bash", {"command": "bash search.sh"}, id="b1")]),
        Turn([text("done")], match=Match(tool_result_for="b1")),
    )
    run = harness.run(["-p", "find the password"], scenario)
    assert run.rc == 0, run.stderr
    result = _result(run)
    assert "searched" in result and "PASSWORD=not-a-secret" in result, result
    assert "hunter2" not in result
