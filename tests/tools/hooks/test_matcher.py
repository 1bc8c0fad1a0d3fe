"""Matchers, `if` conditions and lenient config parsing of hooks (no processes here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from tools.hooks.matcher import (
    compile_matcher,
    if_condition_matches,
    parse_hooks_config,
    tool_name_variants,
)


def _m(source: object) -> tuple[object, list[str]]:
    warnings: list[str] = []
    return compile_matcher(source, warnings.append), warnings


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        (None, "Bash", True),
        ("", "Bash", True),
        ("*", "mcp__x__y", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # exact names, not prefixes
        ("Edit|Write", "Write", True),
        ("Edit|Write", "NotebookEdit", False),
        ("Edit, Write", "Write", True),
        ("Edit.*", "NotebookEdit", True),  # unanchored regex, as in CC
        ("^Edit$", "NotebookEdit", False),
        ("^Edit$", "Edit", True),
        ("mcp__memory__.*", "mcp__memory__create_entities", True),
        ("mcp__memory__.*", "mcp__github__search", False),
        ("Notebook.*|Bash", "Bash", True),
    ],
)
def test_matcher_forms(matcher: object, tool: str, expected: bool) -> None:
    m, warnings = _m(matcher)
    assert m.matches(tool_name_variants(tool)) is expected  # type: ignore[attr-defined]
    assert warnings == []


def test_invalid_regex_warns_and_never_matches() -> None:
    m, warnings = _m("Edit(")
    assert m.matches(("Edit(",)) is False  # type: ignore[attr-defined]
    assert len(warnings) == 1 and "not a valid regex" in warnings[0]


def test_non_string_matcher_warns() -> None:
    m, warnings = _m(42)
    assert m.matches(("42",)) is False  # type: ignore[attr-defined]
    assert warnings


@pytest.mark.parametrize(
    ("matcher", "tool"),
    [("Task", "Agent"), ("Agent", "Task"), ("KillShell", "TaskStop"), ("TaskOutput", "BashOutput")],
)
def test_legacy_aliases_match_both_ways(matcher: str, tool: str) -> None:
    m, _ = _m(matcher)
    assert m.matches(tool_name_variants(tool))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "expected"),
    [
        ("Bash(git *)", "Bash", {"command": "git status"}, True),
        ("Bash(git *)", "Bash", {"command": "ls -la"}, False),
        ("Bash", "Bash", {"command": "anything"}, True),
        ("Bash(git *)", "Edit", {"file_path": "/x"}, False),  # other tool never matches
        ("Edit(*.py)", "Edit", {"file_path": "/repo/src/a.py"}, True),
        ("Edit(*.py)", "Edit", {"file_path": "/repo/src/a.txt"}, False),
        ("Edit(src/**)", "Edit", {"file_path": "/repo/src/pkg/a.py"}, True),
        ("Edit(src/**)", "Edit", {"file_path": "/repo/docs/a.md"}, False),
        ("Edit(//etc/*)", "Edit", {"file_path": "/etc/passwd"}, True),
        ("Read(/secrets/*)", "Read", {"file_path": "/repo/secrets/k"}, True),  # project-anchored
        ("Grep(TODO*)", "Grep", {"pattern": "TODO: fix"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://api.example.com/x"}, True),
        ("WebFetch(domain:example.com)", "WebFetch", {"url": "https://example.org/"}, False),
        ("Agent", "Task", {}, True),  # aliases apply to `if` too
        ("mcp__srv__tool(x)", "mcp__srv__tool", {"q": 1}, True),  # no primary field: runs
        ("Bash(", "Bash", {"command": "ls"}, True),  # unparseable rule: the hook runs
        ("", "Bash", {"command": "ls"}, True),
    ],
)
def test_if_conditions(rule: str, tool: str, tool_input: dict[str, object], expected: bool) -> None:
    got = if_condition_matches(rule, tool, tool_input, cwd=Path("/repo"), project_dir=Path("/repo"))
    assert got is expected


def test_if_bash_compound_command_still_runs_the_hook() -> None:
    # `ls && git push` contains a git command: a `Bash(git *)` check must not be skipped.
    assert if_condition_matches(
        "Bash(git *)", "Bash", {"command": "ls && git push"}, cwd=Path("/repo")
    )


def test_parse_lenient_config_skips_bad_parts_with_warnings() -> None:
    warnings: list[str] = []
    config = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ok", "timeout": 5}]},
            "not a group",
            {"matcher": "Edit"},  # no hooks list
            {"hooks": [{"type": "command"}]},  # no command
            {"hooks": [{"type": "mcp_tool", "tool": "t"}]},  # kept: it denies
            {"hooks": [{"command": "echo t", "timeout": "soon"}]},  # bad timeout: default
            {"hooks": [{"command": "x", "args": "notalist"}]},
        ],
        "Stop": "not a list",
        "UserPromptSubmit": [{"hooks": [{"command": "echo u", "if": "Bash(git *)"}]}],
        "NoSuchEvent": [{"hooks": [{"command": "echo n"}]}],
    }
    parsed = parse_hooks_config(config, policy=False, warn=warnings.append)
    pre = parsed["PreToolUse"]
    assert [h.command for h in pre] == ["echo ok", "<mcp_tool hook>", "echo t"]
    assert pre[1].unrunnable == "mcp_tool"  # a guard Nerve cannot run fails closed
    assert pre[0].timeout_s == 5.0 and pre[2].timeout_s is None
    assert parsed["UserPromptSubmit"][0].if_rule is None  # `if` is for tool events only
    assert "NoSuchEvent" in parsed  # kept, with a warning
    assert len(warnings) == 9
    assert any("'mcp_tool' cannot run in Nerve yet" in w for w in warnings)


def test_parse_non_mapping_config() -> None:
    warnings: list[str] = []
    assert parse_hooks_config(["x"], policy=True, warn=warnings.append) == {}
    assert warnings and "policy hooks" in warnings[0]
    assert parse_hooks_config(None, policy=False, warn=warnings.append) == {}


class _Handler(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    type: str = "command"
    command: str
    if_: str | None = Field(default=None, alias="if")


class _Group(BaseModel):
    matcher: str | None = None
    hooks: list[_Handler]


class _Hooks(BaseModel):
    PreToolUse: list[_Group] = []


def test_pydantic_models_are_accepted() -> None:
    warnings: list[str] = []
    model = _Hooks(
        PreToolUse=[
            _Group(
                matcher="Bash", hooks=[_Handler.model_validate({"command": "echo", "if": "Bash"})]
            )
        ]
    )
    parsed = parse_hooks_config(model, policy=False, warn=warnings.append)
    assert warnings == []
    (h,) = parsed["PreToolUse"]
    assert h.command == "echo" and h.if_rule == "Bash" and h.matcher.source == "Bash"
