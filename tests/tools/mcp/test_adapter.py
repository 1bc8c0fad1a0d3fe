"""Adapter pieces without a server: names, the schema-checking input model."""

from __future__ import annotations

import pydantic
import pytest

from tools.mcp import make_input_model, mcp_tool_name


def test_names_are_normalised_and_fit_the_api_limit() -> None:
    assert mcp_tool_name("my.server", "get page") == "mcp__my_server__get_page"
    long_a = mcp_tool_name("s" * 40, "tool_" + "a" * 40)
    long_b = mcp_tool_name("s" * 40, "tool_" + "b" * 40)
    assert len(long_a) == 64 and len(long_b) == 64 and long_a != long_b
    assert long_a.startswith("mcp__" + "s" * 40 + "__tool_")


def test_input_model_checks_the_json_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}, "tags": {"type": "array"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    model = make_input_model("mcp__s__t", schema)
    ok = model.model_validate({"n": 2, "tags": ["a"]})
    assert ok.model_dump(exclude_unset=True) == {"n": 2, "tags": ["a"]}
    with pytest.raises(pydantic.ValidationError) as err:
        model.model_validate({"n": 0, "zzz": 1})
    messages = {(e["loc"], e["msg"]) for e in err.value.errors()}
    assert (("n",), "0 is less than the minimum of 1") in messages
    assert any("zzz" in msg for _, msg in messages)


def test_a_schema_jsonschema_cannot_use_validates_nothing() -> None:
    bad = make_input_model("mcp__s__bad", {"type": "object", "properties": {"x": {"type": 5}}})
    assert bad.model_validate({"x": "anything"}).model_dump() == {"x": "anything"}
    remote = make_input_model(
        "mcp__s__ref",
        {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/s"}}},
    )
    assert remote.model_validate({"x": 1}).model_dump() == {"x": 1}
