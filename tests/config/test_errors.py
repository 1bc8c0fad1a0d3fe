"""Broken files: messages name file:line:col and the field; policy stops, others are skipped."""

from __future__ import annotations

import os

import pytest

from config import SettingsError
from config.errors import locate_path
from tests.config.conftest import Tree

WRONG_TYPE = """{
  "model": "opus",
  "permissions": {
    "deny": ["Bash(rm *)"],
    "allow": "Bash"
  }
}
"""


def test_wrong_type_names_file_line_col_and_field(tree: Tree) -> None:
    tree.user(WRONG_TYPE)
    tree.proj({"permissions": {"allow": ["Read"]}})
    s = tree.load()
    assert s.warnings[0].splitlines() == [
        "~/.nerve/settings.json:5:14: permissions.allow: expected a list of strings",
        "~/.nerve/settings.json: this file is ignored except its deny and ask rules",
    ]
    (layer,) = [lf for lf in s.layers if lf.source == "userSettings"]
    assert layer.data is None and layer.error and not layer.ok
    # the broken file's model is not used, but its deny rule still restricts (fail closed)
    assert s.model is None
    assert [(e.behavior, e.rule, e.source) for e in s.rule_entries()] == [
        ("allow", "Read", "projectSettings"),
        ("deny", "Bash(rm *)", "userSettings"),
    ]


def test_invalid_json_uses_decoder_position(tree: Tree) -> None:
    tree.proj('{\n  "model": "x",\n  "permissions": {"allow": ["Read",]}\n}\n')
    s = tree.load()
    first = s.warnings[0].splitlines()[0]
    assert first.startswith(f"{tree.project}/.nerve/settings.json:3:")
    assert "invalid JSON" in first
    assert s.layers[0].restrictions == {}


def test_element_and_nested_hook_errors_point_at_the_element(tree: Tree) -> None:
    text = (
        '{"permissions": {"ask": ["ok", 7]},\n'
        ' "hooks": {"PreToolUse": [{"matcher": "Bash",\n'
        '   "hooks": [{"type": "command", "timeout": "30", "command": "x"}]}]},\n'
        ' "env": {"A": 1}}'
    )
    tree.local(text)
    lines = "\n".join(tree.load().warnings).splitlines()
    shown = f"{tree.project}/.nerve/settings.local.json"
    assert f"{shown}:1:32: permissions.ask[1]: expected a string" in lines
    hook = f"{shown}:3:45: hooks.PreToolUse[0].hooks[0].timeout: expected a number"
    assert f"{hook}; this hook is skipped" in lines
    assert not any("env.A" in line for line in lines)  # a number is a fine env value


def test_unknown_mode_and_missing_hook_fields(tree: Tree) -> None:
    tree.user(
        {
            "permissions": {"defaultMode": "yolo"},
            "hooks": {"Stop": [{"matcher": "*"}, {"hooks": [{"type": "command"}]}]},
        }
    )
    msg = "\n".join(tree.load().warnings)
    assert "permissions.defaultMode: unknown permission mode 'yolo'" in msg
    assert "hooks.Stop[0].hooks: required field is missing; this group is skipped" in msg
    assert "hooks.Stop[1].hooks[0]: a 'command' hook needs a non-empty 'command'" in msg


def test_top_level_not_an_object(tree: Tree) -> None:
    tree.user("[1, 2]")
    assert (
        "~/.nerve/settings.json:1:1: (top level): expected an object, got list"
        in (tree.load().warnings[0])
    )


def test_empty_file_is_an_empty_object_without_warning(tree: Tree) -> None:
    tree.user("  \n")
    s = tree.load()
    assert s.warnings == [] and s.layers[0].data == {}


def test_unreadable_and_non_utf8_files_are_reported(tree: Tree) -> None:
    tree.write(tree.home / ".nerve" / "settings.json", "")
    (tree.home / ".nerve" / "settings.json").write_bytes(b'{"model": "\xff"}')
    (tree.project / ".nerve" / "settings.json").mkdir(parents=True)
    s = tree.load()
    text = "\n".join(s.warnings)
    assert "~/.nerve/settings.json:1: not valid UTF-8 text" in text
    assert "settings.json: is a directory" in text


def test_broken_policy_stops_start_up(tree: Tree) -> None:
    tree.managed('{"permissions": {"deny": ["WebFetch"]')
    with pytest.raises(SettingsError, match=r"managed-settings\.json:1:\d+: invalid JSON"):
        tree.load()


def test_broken_policy_dropin_wrong_type_stops(tree: Tree) -> None:
    tree.managed({"model": "fine"})
    tree.write(tree.policy / "managed-settings.d" / "50.json", {"disableAllHooks": "yes"})
    with pytest.raises(SettingsError, match=r"50\.json:2:22: disableAllHooks: expected true or"):
        tree.load()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of mode")
def test_unreadable_policy_stops(tree: Tree) -> None:
    path = tree.managed({"model": "x"})
    path.chmod(0)
    with pytest.raises(SettingsError, match="cannot read"):
        tree.load()


def test_locate_path_falls_back_to_parent() -> None:
    text = '{\n  "a": {\n    "b": [1, {"c": 2}]\n  }\n}'
    assert locate_path(text, ["a", "b", 1, "c"]) == (3, 20)
    assert locate_path(text, ["a", "b", 1, "missing"]) == (3, 14)
    assert locate_path(text, ["a"]) == (2, 8)
    assert locate_path("not json", ["a"]) is None


def test_policy_path_that_is_a_directory_stops(tree: Tree) -> None:
    (tree.policy / "managed-settings.json").mkdir(parents=True)
    with pytest.raises(SettingsError, match="is a directory"):
        tree.load()
