"""``nerve -p --json-schema``: the final answer through the StructuredOutput tool, validated
against the schema, in the json result's ``structured_output`` (issue 17 item 3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_cli.testing import Match, Scenario, Turn, text, tool_use
from tests.agent_cli.e2e.conftest import Harness

SCHEMA = {
    "type": "object",
    "properties": {"functions": {"type": "array", "items": {"type": "string"}}},
    "required": ["functions"],
}


def _result_block(body: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
    (block,) = (
        b
        for b in body["messages"][-1]["content"]
        if b.get("type") == "tool_result" and b["tool_use_id"] == tool_use_id
    )
    return block


def _text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content)
    return str(content)


def _args(schema: Any = SCHEMA) -> list[str]:
    return [
        "-p",
        "list the functions",
        "--output-format",
        "json",
        "--json-schema",
        json.dumps(schema),
    ]


def test_valid_output_lands_in_structured_output(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("StructuredOutput", {"functions": ["login", "logout"]}, id="s1")]),
        Turn([text("Done.")], match=Match(tool_result_for="s1")),
    )
    run = harness.run(_args(), scenario)
    assert run.rc == 0, run.stderr
    result = run.json()
    assert result["structured_output"] == {"functions": ["login", "logout"]}
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "Done."
    first, second = (r.body for r in run.server.requests)
    (tool,) = (t for t in first["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"] == SCHEMA
    assert "StructuredOutput" in json.dumps(first["system"])
    assert not _result_block(second, "s1").get("is_error")


def test_a_mismatch_is_told_to_the_model_which_corrects_it(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("StructuredOutput", {"functions": "login"}, id="s1")]),
        Turn(
            [tool_use("StructuredOutput", {"functions": ["login"]}, id="s2")],
            match=Match(tool_result_for="s1"),
        ),
        Turn([text("ok")], match=Match(tool_result_for="s2")),
    )
    run = harness.run(_args(), scenario)
    assert run.rc == 0, run.stderr
    assert run.json()["structured_output"] == {"functions": ["login"]}
    bad = _result_block(run.server.requests[1].body, "s1")
    assert bad["is_error"] is True
    assert "functions: 'login' is not of type 'array'" in _text(bad)


def test_a_turn_that_ends_without_the_tool_gets_a_reminder(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([text("The functions are login and logout.")]),
        Turn(
            [tool_use("StructuredOutput", {"functions": ["login", "logout"]}, id="s1")],
            match=Match(contains_text="You must call the StructuredOutput tool"),
        ),
        Turn([text("ok")], match=Match(tool_result_for="s1")),
    )
    # text output prints the validated JSON, so `nerve -p ... | jq` works either way
    run = harness.run(["-p", "list", "--json-schema", json.dumps(SCHEMA)], scenario)
    assert run.rc == 0, run.stderr
    assert json.loads(run.stdout) == {"functions": ["login", "logout"]}


def test_out_of_attempts_is_a_clear_error(harness: Harness) -> None:
    scenario = Scenario.of(
        Turn([tool_use("StructuredOutput", {"wrong": 1}, id="s1")]),
        *(
            Turn(
                [tool_use("StructuredOutput", {"wrong": n}, id=f"s{n}")],
                match=Match(tool_result_for=f"s{n - 1}"),
            )
            for n in range(2, 6)
        ),
    )
    run = harness.run(_args(), scenario)
    assert run.rc == 1
    result = run.json()
    assert result["subtype"] == "error_max_structured_output_retries"
    assert result["is_error"] is True and result["structured_output"] is None
    assert "after 5 attempts" in result["errors"][-1]
    assert "'functions' is a required property" in result["errors"][-1]


def test_a_schema_that_is_not_an_object_is_wrapped(harness: Harness) -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    scenario = Scenario.of(
        Turn([tool_use("StructuredOutput", {"output": [1, 2, 3]}, id="s1")]),
        Turn([text("ok")], match=Match(tool_result_for="s1")),
    )
    run = harness.run(_args(schema), scenario)
    assert run.rc == 0, run.stderr
    assert run.json()["structured_output"] == [1, 2, 3]
    (tool,) = (t for t in run.server.requests[0].body["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"]["properties"]["output"] == schema


def test_a_schema_file_is_read(harness: Harness) -> None:
    (harness.project / "schema.json").write_text(json.dumps(SCHEMA))
    scenario = Scenario.of(
        Turn([tool_use("StructuredOutput", {"functions": []}, id="s1")]),
        Turn([text("ok")], match=Match(tool_result_for="s1")),
    )
    run = harness.run(
        ["-p", "x", "--output-format", "json", "--json-schema", "schema.json"], scenario
    )
    assert run.rc == 0, run.stderr
    assert run.json()["structured_output"] == {"functions": []}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{nope", "--json-schema: invalid JSON at line 1"),
        ('{"type": "nonsense"}', "--json-schema: not a valid JSON Schema"),
        ("[1, 2]", "--json-schema: a JSON Schema must be an object"),
        ("missing.json", "--json-schema: not JSON and no such file: missing.json"),
    ],
)
def test_a_bad_schema_is_an_error_before_any_request(
    harness: Harness, value: str, message: str
) -> None:
    run = harness.run(["-p", "x", "--json-schema", value], None)
    assert run.rc == 1
    assert message in run.stderr
    assert harness.transcripts() == []
