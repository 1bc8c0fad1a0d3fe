"""Issue 22 end to end: a real ``nerve -p`` whose Bash calls run in the real sandbox."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness
from tests.tools.sandbox.support import needs_sandbox

ON = {"sandbox": {"enabled": True}}


def _settings(harness: Harness, data: dict[str, object]) -> None:
    """User settings (``CLAUDE_CONFIG_DIR`` is ``<home>/.claude`` in the harness)."""
    user = harness.root / "home" / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps(data))


def _bash_scenario(command: str) -> Scenario:
    return Scenario.of(
        Turn([tool_use("Bash", {"command": command}, id="b1")]),
        Turn([text("done")], match=Match(tool_result_for="b1")),
    )


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
def test_print_mode_runs_a_sandboxed_command_without_asking(harness: Harness) -> None:
    _settings(harness, ON)
    command = 'touch made.txt; touch /etc/nerve-e2e; echo "key=${ANTHROPIC_API_KEY:-unset}"'
    run = harness.run(["-p", "make it"], _bash_scenario(command))
    assert run.rc == 0, run.stderr
    # default mode and no one to ask: without the sandbox this call would have been denied
    assert (harness.project / "made.txt").exists()
    result = _result(run)
    assert "Read-only file system" in result and "key=unset" in result
    assert not Path("/etc/nerve-e2e").exists()


def test_an_unavailable_sandbox_says_so_once_and_allows_nothing(harness: Harness) -> None:
    _settings(harness, ON)
    harness.env["NERVE_SANDBOX_BWRAP"] = str(harness.root / "no-bwrap")
    run = harness.run(["-p", "make it"], _bash_scenario("touch made.txt"))
    assert run.rc == 0, run.stderr
    assert run.stderr.count("the sandbox cannot start") == 1
    assert "bubblewrap (bwrap) is not installed" in run.stderr
    assert not (harness.project / "made.txt").exists()  # asked, and print mode denies
    assert "was not granted" in _result(run)


def test_fail_if_unavailable_stops_nerve(harness: Harness) -> None:
    _settings(harness, {"sandbox": {"enabled": True, "failIfUnavailable": True}})
    harness.env["NERVE_SANDBOX_BWRAP"] = str(harness.root / "no-bwrap")
    run = harness.run(["-p", "hi"], None)
    assert run.rc != 0
    assert "sandbox.failIfUnavailable is set and the sandbox cannot start" in run.stderr


def test_unknown_sandbox_keys_warn_and_the_sandbox_stays_on(harness: Harness) -> None:
    _settings(harness, {"sandbox": {"enabled": True, "networks": {}}})
    warning = "unknown setting 'sandbox.networks' (did you mean 'network'?)"
    run = harness.run(["-p", "hi"], Scenario.of(Turn([text("hello")])))
    assert run.rc == 0, run.stderr
    assert run.stderr.count(warning) == 1
    run = harness.run(["-p", "/sandbox"], Scenario.of())
    assert "Sandbox: on" in run.stdout or "cannot start" in run.stdout
    assert warning in run.stdout


@needs_sandbox
def test_slash_sandbox_shows_and_switches_the_mode(harness: Harness) -> None:
    _settings(harness, ON)
    # an untracked settings.local.json in a git repository is the user's own: it applies
    subprocess.run(["git", "init", "-q", str(harness.project)], check=True)
    run = harness.run(["-p", "/sandbox"], Scenario.of())
    assert run.rc == 0, run.stderr
    assert "Sandbox: on (bubblewrap) · auto-allow" in run.stdout
    assert "Processes:" in run.stdout and "Unix sockets: closed" in run.stdout
    run = harness.run(["-p", "/sandbox regular"], Scenario.of())
    assert run.rc == 0, run.stderr
    local = harness.project / ".claude" / "settings.local.json"
    assert json.loads(local.read_text()) == {
        "sandbox": {"enabled": True, "autoAllowBashIfSandboxed": False}
    }
    assert "regular permissions" in run.stdout
    run = harness.run(["-p", "/sandbox off"], Scenario.of())
    assert json.loads(local.read_text())["sandbox"]["enabled"] is False
    run = harness.run(["-p", "/sandbox"], Scenario.of())
    assert "Sandbox: off" in run.stdout
