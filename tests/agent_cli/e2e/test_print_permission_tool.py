"""``nerve -p --permission-prompt-tool mcp__server__tool`` (issue 17 item 3): a real stdio MCP
tool answers the permission prompts of a headless run; deny rules come first; a missing tool or
an answer that is not a decision denies (fails closed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness
from tests.tools.mcp.conftest import SERVERS

TOOL = "mcp__approver__approve"


def _config(log: Path) -> str:
    server = {
        "command": sys.executable,
        "args": [str(SERVERS / "approver_server.py")],
        "env": {"APPROVER_LOG": str(log)},
    }
    return json.dumps({"mcpServers": {"approver": server}})


def _bash(command: str, id: str, after: str | None) -> Turn:
    match = Match(tool_result_for=after) if after else None
    return Turn([tool_use("Bash", {"command": command}, id=id)], match=match)


def _result(body: dict[str, Any], tool_use_id: str) -> str:
    for message in body["messages"]:
        for b in message["content"] if isinstance(message["content"], list) else []:
            if b.get("type") == "tool_result" and b["tool_use_id"] == tool_use_id:
                c = b["content"]
                return "".join(x.get("text", "") for x in c) if isinstance(c, list) else str(c)
    raise AssertionError(f"no result for {tool_use_id}")


def test_an_mcp_tool_answers_each_prompt_and_deny_rules_come_first(harness: Harness) -> None:
    log = harness.root / "approver.jsonl"
    scenario = Scenario.of(
        _bash("touch allowed.txt", "b1", None),
        _bash("touch denied.txt", "b2", "b1"),
        _bash("touch REWRITE.txt", "b3", "b2"),
        _bash("touch garbage.txt", "b4", "b3"),
        _bash("rm -rf build", "b5", "b4"),
        Turn([text("done")], match=Match(tool_result_for="b5")),
    )
    run = harness.run(
        [
            "-p",
            "go",
            "--mcp-config",
            _config(log),
            "--permission-prompt-tool",
            TOOL,
            "--disallowedTools",
            "Bash(rm *)",
        ],
        scenario,
    )
    assert run.rc == 0, run.stderr
    project = harness.project
    assert (project / "allowed.txt").exists()
    assert not (project / "denied.txt").exists()
    assert (project / "rewritten.txt").exists() and not (project / "REWRITE.txt").exists()
    assert not (project / "garbage.txt").exists()
    last = run.server.requests[-1].body
    assert "the approver refuses Bash" in _result(last, "b2")
    assert "not a permission decision" in _result(last, "b4")
    asked = [json.loads(line)["input"]["command"] for line in log.read_text().splitlines()]
    assert asked == [
        "touch allowed.txt",
        "touch denied.txt",
        "touch REWRITE.txt",
        "touch garbage.txt",
    ]  # the rm was denied by the rule, never asked


def test_a_missing_prompt_tool_denies_and_a_bad_value_is_refused(harness: Harness) -> None:
    scenario = Scenario.of(
        _bash("touch made.txt", "b1", None),
        Turn([text("ok")], match=Match(tool_result_for="b1")),
    )
    run = harness.run(["-p", "go", "--permission-prompt-tool", "mcp__nobody__approve"], scenario)
    assert run.rc == 0, run.stderr
    assert not (harness.project / "made.txt").exists()
    assert "mcp__nobody__approve is not available" in _result(run.server.requests[-1].body, "b1")
    bad = harness.run(["-p", "go", "--permission-prompt-tool", "stdio"], None)
    assert bad.rc == 2 and "names an MCP tool" in bad.stderr
