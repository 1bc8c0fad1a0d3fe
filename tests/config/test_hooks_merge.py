"""Hooks from every level combine, identical handlers run once, policy hooks stay apart."""

from __future__ import annotations

from typing import Any

from config.merge import combine_hooks, deep_merge
from tests.config.conftest import Tree


def _cmd(command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **extra}


def _hooks(event: str, matcher: str | None, *handlers: dict[str, Any]) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        group["matcher"] = matcher
    return {"hooks": {event: [group]}}


def test_hooks_from_all_levels_combine_and_dedupe(tree: Tree) -> None:
    tree.user(_hooks("PreToolUse", "Bash", _cmd("lint.sh"), _cmd("audit.sh", timeout=5)))
    tree.proj(_hooks("PreToolUse", "Bash", _cmd("lint.sh"), _cmd("proj.sh")))
    tree.local(_hooks("PostToolUse", None, {"type": "http", "url": "http://127.0.0.1:9/x"}))
    tree.user(
        _hooks("PreToolUse", "Bash", {"timeout": 5, "command": "audit.sh", "type": "command"}),
        ".claude",
    )
    s = tree.load()
    pre = s.hooks["PreToolUse"]
    assert len(pre) == 1 and pre[0]["matcher"] == "Bash"
    commands = [h["command"] for h in pre[0]["hooks"]]
    assert sorted(commands) == ["audit.sh", "lint.sh", "proj.sh"]  # each once
    assert s.hooks["PostToolUse"] == [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/x"}]}]
    assert s.policy_hooks == {}
    assert s.active_hooks() == s.hooks


def test_different_matchers_stay_separate_groups(tree: Tree) -> None:
    tree.user(_hooks("PreToolUse", "Bash", _cmd("a")))
    tree.proj(_hooks("PreToolUse", "Edit|Write", _cmd("a")))
    groups = tree.load().hooks["PreToolUse"]
    assert sorted(g["matcher"] for g in groups) == ["Bash", "Edit|Write"]


def test_policy_hooks_kept_apart_and_not_disabled_from_below(tree: Tree) -> None:
    tree.managed(_hooks("PreToolUse", "Bash", _cmd("policy.sh")))
    tree.user(
        {
            **_hooks("PreToolUse", "Bash", _cmd("policy.sh"), _cmd("mine.sh")),
            "disableAllHooks": True,
        }
    )
    s = tree.load()
    assert s.policy_hooks == {"PreToolUse": [{"matcher": "Bash", "hooks": [_cmd("policy.sh")]}]}
    # the identical handler is not repeated outside policy
    assert s.hooks == {"PreToolUse": [{"matcher": "Bash", "hooks": [_cmd("mine.sh")]}]}
    assert s.disable_all_hooks and not s.disable_policy_hooks
    assert s.active_hooks() == s.policy_hooks
    # the merged model shows every hook once
    assert len(s.merged.hooks["PreToolUse"][0].hooks) == 2


def test_policy_can_disable_everything_or_allow_only_managed(tree: Tree) -> None:
    tree.user(_hooks("Stop", None, _cmd("mine.sh")))
    tree.managed({**_hooks("Stop", None, _cmd("p.sh")), "allowManagedHooksOnly": True})
    s = tree.load()
    assert s.active_hooks() == {"Stop": [{"hooks": [_cmd("p.sh")]}]}
    tree.managed({**_hooks("Stop", None, _cmd("p.sh")), "disableAllHooks": True})
    s = tree.load()
    assert s.disable_policy_hooks and s.active_hooks() == {}


def test_hook_keyword_fields_kept_as_written(tree: Tree) -> None:
    handler = _cmd(
        "x",
        **{
            "if": "Bash(git *)",
            "async": True,
            "statusMessage": "checking",
            "args": ["-v"],
            "shell": "bash",
            "asyncRewake": True,
        },
    )
    tree.proj(_hooks("PreToolUse", "Bash", handler))
    s = tree.load()
    assert s.hooks["PreToolUse"][0]["hooks"][0] == handler
    parsed = s.merged.hooks["PreToolUse"][0].hooks[0]
    assert (parsed.if_, parsed.async_, parsed.model_extra) == (
        "Bash(git *)",
        True,
        {"asyncRewake": True},
    )


def test_deep_merge_rules() -> None:
    high = {"env": {"A": "1"}, "permissions": {"allow": ["x"]}, "fallbackModel": ["h"], "s": 1}
    low = {
        "env": {"A": "0", "B": "2"},
        "permissions": {"allow": ["y", "x"], "ask": ["z"]},
        "fallbackModel": ["l"],
        "s": 2,
        "t": 3,
    }
    assert deep_merge(high, low) == {
        "env": {"A": "1", "B": "2"},
        "permissions": {"allow": ["x", "y"], "ask": ["z"]},
        "fallbackModel": ["h"],
        "s": 1,
        "t": 3,
    }
    assert high["permissions"] == {"allow": ["x"]}  # inputs untouched


def test_combine_hooks_order_and_identity() -> None:
    a = {"Stop": [{"hooks": [_cmd("one"), _cmd("two")]}]}
    b = {"Stop": [{"hooks": [_cmd("two"), _cmd("three")]}, {"matcher": "", "hooks": [_cmd("one")]}]}
    assert combine_hooks([a, b]) == {
        "Stop": [
            {"hooks": [_cmd("one"), _cmd("two"), _cmd("three")]},
            {"matcher": "", "hooks": [_cmd("one")]},
        ]
    }
