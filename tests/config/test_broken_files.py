"""Broken settings never drop deny rules (issue 18.6) and special files never hang (18.7)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from config import SettingsError, add_permission_rule
from config.files import NotRegularFile, read_regular_file
from config.salvage import recover_from_data, recover_from_text
from tests.config.conftest import Tree


def _rules(tree: Tree, **kw: object) -> list[tuple[str, str, str]]:
    s = tree.load(**kw)  # type: ignore[arg-type]
    return [(e.behavior, e.rule, e.source) for e in s.rule_entries()]


BROKEN_TEXTS = {
    "trailing comma": '{"permissions": {"deny": ["Bash(rm *)",], "allow": ["Bash"]},}',
    "comment": '{\n  // keep secrets out\n  "permissions": {"deny": ["Bash(rm *)"]} /* end */\n}',
    "NUL": '{"permissions": {"deny": ["Bash(rm *)"]}, "model": "x"}\0\0',
}


@pytest.mark.parametrize("name", sorted(BROKEN_TEXTS))
def test_invalid_json_keeps_its_deny_rules(tree: Tree, name: str) -> None:
    tree.user(BROKEN_TEXTS[name])
    s = tree.load()
    assert ("deny", "Bash(rm *)", "userSettings") in _rules(tree)
    assert not any(e.behavior == "allow" for e in s.rule_entries())  # the rest is ignored
    text = "\n".join(s.warnings)
    assert "this file is ignored except its deny and ask rules" in text
    assert "every tool call asks" not in text  # recovered completely: no blanket ask


def test_invalid_utf8_keeps_its_deny_rules(tree: Tree) -> None:
    path = tree.user("")
    path.write_bytes(b'{"model": "caf\xe9", "permissions": {"deny": ["Read(./.env)"]}}')
    assert _rules(tree) == [("deny", "Read(./.env)", "userSettings")]
    assert "not valid UTF-8 text" in tree.load().warnings[0]


def test_invalid_utf8_inside_a_rule_also_asks_for_everything(tree: Tree) -> None:
    path = tree.user("")
    path.write_bytes(b'{"permissions": {"deny": ["Read(./caf\xe9)"]}}')
    rules = _rules(tree)
    assert ("ask", "*", "userSettings") in rules
    assert "every tool call asks until the file is fixed" in tree.load().warnings[0]


def test_deny_written_as_a_string_is_one_rule(tree: Tree) -> None:
    tree.proj({"permissions": {"deny": "Bash(curl *)", "allow": "Read"}})
    s = tree.load()
    assert [(e.behavior, e.rule) for e in s.rule_entries()] == [("deny", "Bash(curl *)")]
    assert "permissions.allow: expected a list of strings" in s.warnings[0]


def test_a_truncated_file_keeps_what_it_can_and_asks_for_the_rest(tree: Tree) -> None:
    tree.user('{"permissions": {"deny": ["Bash(rm *)", "Read(./.env)", "Bash(cu')
    s = tree.load()
    assert [(e.behavior, e.rule) for e in s.rule_entries()] == [
        ("deny", "Bash(rm *)"),
        ("deny", "Read(./.env)"),
        ("ask", "*"),
    ]
    text = s.warnings[0]
    assert "the deny and ask rules recovered from it apply" in text
    assert "every tool call asks until the file is fixed" in text


def test_garbage_without_rules_asks_nothing_extra(tree: Tree) -> None:
    tree.user('{"model": "x",, "cleanupPeriodDays": 3}')
    s = tree.load()
    assert list(s.rule_entries()) == []
    assert s.warnings[0].endswith("this file is ignored")


def test_unreadable_file_asks_for_every_tool(tree: Tree) -> None:
    # A symlink loop cannot be read even by root (chmod 000 can): the file exists, its rules
    # are unknown.
    link = tree.home / ".nerve" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(link)
    s = tree.load()
    assert [(e.behavior, e.rule, e.source) for e in s.rule_entries()] == [
        ("ask", "*", "userSettings")
    ]
    assert "cannot read" in s.warnings[0]
    assert "every tool call asks until the file is fixed" in s.warnings[0]


def test_blanket_ask_makes_a_tool_call_ask_even_in_bypass_mode(tree: Tree) -> None:
    from permissions.engine import decide
    from permissions.from_settings import permission_context_from_settings
    from permissions.types import Decision, PermissionMode, PermissionRequest, ToolKind

    tree.user('{"permissions": {"deny": [')
    ctx, _ = permission_context_from_settings(
        tree.load(), cwd=tree.project, mode=PermissionMode.BYPASS, bypass_available=True
    )
    request = PermissionRequest("Read", {"file_path": str(tree.project / "a")}, ToolKind.READ)
    verdict = decide(request, ctx)
    assert verdict.decision is Decision.ASK
    assert verdict.rule is not None and verdict.rule.value.tool_name == "*"


def test_values_of_unexpected_shape_ask_for_everything() -> None:
    assert not recover_from_data({"permissions": ["Bash(rm *)"]}).complete
    assert not recover_from_data({"permissions": {"deny": {"Bash": "rm"}}}).complete
    assert recover_from_data({"permissions": {"deny": ["x", 3, None]}}).rules == {"deny": ["x"]}
    mangled = recover_from_text('{"perm\ufffdssions": {"deny": ["x"]},}')
    assert not mangled.complete


def test_hook_with_a_typo_is_reported_and_the_guard_still_runs(tree: Tree) -> None:
    guard = {"type": "command", "command": "guard.sh"}
    tree.user(
        {
            "permissions": {"allow": ["Bash(ls *)"]},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "comand", "command": "typo.sh"}, guard]},
                    {"matchr": "Edit", "hooks": [{"type": "command", "command": "fmt.sh"}]},
                    {"matcher": "Write", "hook": [guard]},
                ],
                "Stop": "not a list",
            },
        }
    )
    s = tree.load()
    groups = s.active_hooks()["PreToolUse"]
    commands = [(g.get("matcher"), [h["command"] for h in g["hooks"]]) for g in groups]
    assert commands == [("Bash", ["guard.sh"]), (None, ["fmt.sh"])]
    assert "Stop" not in s.active_hooks() or s.active_hooks()["Stop"] == []
    text = "\n".join(s.warnings)
    assert "hooks.PreToolUse[0].hooks[0].type: expected 'command'" in text
    assert "this hook is skipped" in text
    assert "hooks.PreToolUse[1].matchr: unknown key; did you mean 'matcher'?" in text
    assert "hooks.PreToolUse[2].hooks: required field is missing; this group is skipped" in text
    assert "hooks.Stop: expected a list" in text
    assert ("allow", "Bash(ls *)", "userSettings") in _rules(tree)  # the file still applies


def test_policy_hook_with_a_typo_stops_start_up(tree: Tree) -> None:
    tree.managed({"hooks": {"PreToolUse": [{"hooks": [{"type": "comand", "command": "x"}]}]}})
    with pytest.raises(SettingsError, match="managed settings are broken"):
        tree.load()


@pytest.mark.timeout(20)
def test_fifo_settings_file_is_refused_without_opening(tree: Tree) -> None:
    path = tree.home / ".nerve" / "settings.json"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    tree.proj({"permissions": {"deny": ["Bash(rm *)"]}})
    s = tree.load()  # would block forever if the FIFO were opened for reading
    assert "is a FIFO (named pipe), not a regular file; not opened" in s.warnings[0]
    assert ("deny", "Bash(rm *)", "projectSettings") in _rules(tree)


@pytest.mark.timeout(20)
def test_device_and_symlinked_fifo_are_refused(tree: Tree, tmp_path: Path) -> None:
    tree.home.joinpath(".nerve").mkdir()
    tree.home.joinpath(".nerve", "settings.json").symlink_to("/dev/zero")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tree.project / ".nerve").mkdir()
    (tree.project / ".nerve" / "settings.json").symlink_to(fifo)
    text = "\n".join(tree.load().warnings)
    assert "is a character device, not a regular file" in text
    assert "is a FIFO (named pipe), not a regular file" in text
    with pytest.raises(SettingsError, match="FIFO"):
        add_permission_rule(tree.project / ".nerve" / "settings.json", "allow", "Read")


@pytest.mark.timeout(20)
def test_policy_fifo_stops_start_up(tree: Tree) -> None:
    tree.policy.mkdir(parents=True)
    os.mkfifo(tree.policy / "managed-settings.json")
    with pytest.raises(SettingsError, match="FIFO"):
        tree.load()


def test_read_regular_file_limits(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    assert read_regular_file(big) == b" " * 2048
    with pytest.raises(NotRegularFile, match="over the 1024-byte limit"):
        read_regular_file(big, max_bytes=1024)
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        with pytest.raises(NotRegularFile, match="a socket"):
            read_regular_file(sock_path)
    finally:
        sock.close()
