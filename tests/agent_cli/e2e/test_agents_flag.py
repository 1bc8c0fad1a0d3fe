"""``--agents JSON`` (Claude Code's flag; the Agent SDKs' ``agents`` option arrives this way):
sub-agent types over the built-in and file ones, listed to the model and run with their own
prompt and tools; a malformed value fails, an entry Nerve cannot honour is skipped with a
warning."""

from __future__ import annotations

import json

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness, harness

__all__ = ["harness"]

REVIEWER = {"description": "Reviews code", "prompt": "REVIEWPROMPT", "tools": ["Read"]}


def _sub_request(body: dict) -> bool:
    return "REVIEWPROMPT" in json.dumps(body.get("system"))


def test_an_agent_from_the_flag_is_listed_and_runs_with_its_prompt_and_tools(
    harness: Harness,
) -> None:
    agents = {
        "reviewer": REVIEWER,
        "Explore": {"description": "My own explorer", "prompt": "EXPLOREPROMPT"},
    }
    call = {"description": "review", "prompt": "look at a.py", "subagent_type": "reviewer"}
    scenario = Scenario.of(
        Turn([tool_use("Agent", call, id="t1")]),
        Turn([text("looks fine")], match=Match(predicate=_sub_request, description="sub")),
        Turn([text("Reviewed.")], match=Match(tool_result_for="t1")),
    )
    run = harness.run(
        ["-p", "review", "--agents", json.dumps(agents), "--allowedTools", "Agent"], scenario
    )
    assert run.rc == 0, run.stderr
    assert run.stdout.strip() == "Reviewed."
    main, sub, _ = (r.body for r in run.server.requests)
    listing = json.dumps(main["system"])
    assert "- reviewer: Reviews code" in listing
    assert "- Explore: My own explorer" in listing and "Fast read-only" not in listing
    assert [t["name"] for t in sub["tools"]] == ["Read"]
    assert "look at a.py" in json.dumps(sub["messages"])


def test_malformed_agents_fail_and_unsupported_entries_are_skipped(harness: Harness) -> None:
    bad = harness.run(["-p", "hi", "--agents", "{not json"], None)
    assert bad.rc == 1 and "--agents is not JSON" in bad.stderr
    agents = {
        "reviewer": REVIEWER,
        "narrow": {"description": "d", "prompt": "p", "disallowedTools": ["Bash"]},
        "vague": {"prompt": "p"},
        "extra": {"description": "Has extras", "prompt": "p", "maxTurns": 3},
    }
    run = harness.run(["-p", "hi", "--agents", json.dumps(agents)], Scenario.of(Turn([text("ok")])))
    assert run.rc == 0, run.stderr
    assert "agent 'narrow' (--agents): disallowedTools is not supported; skipped" in run.stderr
    assert "agent 'vague' (--agents): no description; skipped" in run.stderr
    assert "agent 'extra' (--agents): maxTurns ignored" in run.stderr
    listing = json.dumps(run.server.requests[0].body["system"])
    assert "- reviewer:" in listing and "- extra: Has extras" in listing
    assert "- narrow:" not in listing and "- vague:" not in listing
