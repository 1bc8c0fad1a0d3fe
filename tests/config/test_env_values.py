"""``env`` values as Claude Code reads them (issue 16.2): numbers and booleans are strings."""

from __future__ import annotations

import pytest

from config.env import js_string, normalize_env
from tests.config.conftest import Tree


def test_numbers_and_booleans_become_strings_and_the_file_still_applies(tree: Tree) -> None:
    tree.user(
        {
            "env": {
                "FOO": "bar",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": 1,
                "FLAG": True,
                "OFF": False,
                "RATIO": 0.5,
                "BIG": 1e21,
            },
            "permissions": {"allow": ["Bash(touch *)"]},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]
            },
        }
    )
    s = tree.load()
    assert s.warnings == []
    assert s.env == {
        "FOO": "bar",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "FLAG": "true",
        "OFF": "false",
        "RATIO": "0.5",
        "BIG": "1e+21",
    }
    assert [e.rule for e in s.rule_entries()] == ["Bash(touch *)"]
    assert s.active_hooks()["PreToolUse"][0]["hooks"][0]["command"] == "x"


def test_object_list_and_null_values_are_a_warning_naming_the_key(tree: Tree) -> None:
    tree.user(
        '{"env": {"GOOD": 2,\n "NESTED": {"a": 1}, "LIST": [1], "NOTHING": null},\n'
        ' "permissions": {"deny": ["Bash(rm *)"]}}'
    )
    s = tree.load()
    assert s.env == {"GOOD": "2"}
    assert [e.rule for e in s.rule_entries()] == ["Bash(rm *)"]
    text = "\n".join(s.warnings)
    assert (
        "settings.json:2:12: env.NESTED: expected a string, number or boolean, got an object"
        in text
    )
    assert (
        "env.LIST: expected a string, number or boolean, got a list; this variable is not set"
        in text
    )
    assert "env.NOTHING: expected a string, number or boolean, got null" in text
    assert "this file is ignored" not in text


def test_env_that_is_not_an_object_drops_only_env(tree: Tree) -> None:
    tree.user({"env": ["FOO=1"], "model": "opus"})
    s = tree.load()
    assert s.env == {} and s.model == "opus"
    assert (
        "env: expected an object of variables, got a list; no variable of it is set"
        in (s.warnings[0])
    )


def test_names_and_values_the_os_cannot_carry_are_dropped() -> None:
    env, problems = normalize_env({"": "x", "A=B": "x", "NUL": "a\0b", "OK": "fine"})
    assert env == {"OK": "fine"}
    assert [key for key, _ in problems] == ["", "A=B", "NUL"]


def test_higher_layer_value_wins_after_conversion(tree: Tree) -> None:
    tree.user({"env": {"N": 1, "KEEP": True}})
    tree.local({"env": {"N": 2.0}})
    assert tree.load().env == {"N": "2", "KEEP": "true"}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1, "1"),
        (-3, "-3"),
        (True, "true"),
        (1.0, "1"),
        (0.1, "0.1"),
        (1e-7, "1e-7"),
        (1.5e22, "1.5e+22"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
        ("s", "s"),
        (None, None),
        ({}, None),
    ],
)
def test_js_string_matches_javascript(value: object, text: str | None) -> None:
    assert js_string(value) == text
