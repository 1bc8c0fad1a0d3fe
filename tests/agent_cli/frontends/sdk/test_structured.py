"""The Agent SDK's ``output_format`` (``--json-schema`` in its mode): each prompt's answer comes
back validated in the result's ``structured_output``, with the real SDK and over raw pipes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import NERVE, Harness, harness
from tests.agent_cli.frontends.sdk.test_protocol import SDK_ARGS, user

sdk = pytest.importorskip(
    "claude_agent_sdk", reason="claude-agent-sdk is not installed (the test extra brings it)"
)

__all__ = ["harness"]

SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
}


def _results(stdout: str) -> list[dict[str, Any]]:
    frames = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [f for f in frames if f["type"] == "result"]


async def test_each_prompt_of_a_client_gets_its_own_structured_output(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("StructuredOutput", {"count": 3}, id="s1")]),
        Turn([text("Three files.")], match=Match(tool_result_for="s1")),
        # the second prompt's first answer forgets the tool: reminded, then it answers
        Turn([text("Five now.")], match=Match(contains_text="and now?")),
        Turn(
            [tool_use("StructuredOutput", {"count": 5}, id="s2")],
            match=Match(contains_text="You must call the StructuredOutput tool"),
        ),
        Turn([text("Five.")], match=Match(tool_result_for="s2")),
    )
    server = harness.server(scenario)
    opts = sdk.ClaudeAgentOptions(
        cli_path=NERVE,
        cwd=str(harness.project),
        env=harness.env_for(server),
        output_format={"type": "json_schema", "schema": SCHEMA},
    )
    results: list[Any] = []
    try:
        async with sdk.ClaudeSDKClient(options=opts) as client:
            for prompt in ("how many files?", "and now?"):
                await client.query(prompt)
                async for message in client.receive_response():
                    if isinstance(message, sdk.ResultMessage):
                        results.append(message)
    finally:
        server.stop()
    assert server.failures == [], server.failures
    server.assert_done()
    assert [r.structured_output for r in results] == [{"count": 3}, {"count": 5}]
    assert [r.subtype for r in results] == ["success", "success"]
    (tool,) = (t for t in server.requests[0].body["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"] == SCHEMA


def test_attempts_run_out_for_one_prompt_and_the_next_starts_afresh(harness: Harness) -> None:
    wrong = [Turn([tool_use("StructuredOutput", {"count": "many"}, id="w1")])]
    for n in range(2, 6):  # each mismatch goes back to the model, five in all
        call = tool_use("StructuredOutput", {"count": "many"}, id=f"w{n}")
        wrong.append(Turn([call], match=Match(tool_result_for=f"w{n - 1}")))
    scenario = Scenario.of(
        *wrong,
        Turn(
            [tool_use("StructuredOutput", {"count": 2}, id="ok")],
            match=Match(contains_text="again"),
        ),
        Turn([text("Two.")], match=Match(tool_result_for="ok")),
    )
    lines = [user("count them"), user("again")]
    run = harness.run(
        [*SDK_ARGS, "--json-schema", json.dumps(SCHEMA)], scenario, input="\n".join(lines) + "\n"
    )
    first, second = _results(run.stdout)
    assert first["subtype"] == "error_max_structured_output_retries" and first["is_error"]
    assert first["structured_output"] is None
    assert any("no output matching --json-schema after 5 attempts" in e for e in first["errors"])
    assert second["subtype"] == "success" and second["structured_output"] == {"count": 2}
    run.server.assert_done()


def test_a_bad_schema_is_an_error_before_any_request(harness: Harness) -> None:
    run = harness.run(
        [*SDK_ARGS, "--json-schema", '{"type": "nope"}'], Scenario.of(), input=user("hi") + "\n"
    )
    assert run.rc == 1
    assert "--json-schema: not a valid JSON Schema" in run.stderr
    assert run.server.requests == []
