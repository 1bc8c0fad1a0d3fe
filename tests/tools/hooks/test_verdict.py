"""The verdict protocol of ``prompt``/``agent`` hooks: prompt rendering, parsing, effects."""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.types import Decision
from tools.hooks.matcher import HookHandler, Matcher, parse_hooks_config
from tools.hooks.runner import HookRunner, HookSession
from tools.hooks.verdict import (
    Verdict,
    VerdictError,
    failed_effect,
    parse_verdict,
    render_prompt,
    verdict_effect,
)

H = HookHandler(event="PreToolUse", matcher=Matcher(""), command="safe?", kind="prompt")


def test_arguments_are_replaced_else_appended() -> None:
    assert render_prompt("check $ARGUMENTS now", '{"a":1}') == 'check {"a":1} now'
    assert render_prompt("check", '{"a":1}') == 'check\n\n{"a":1}'


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ('{"ok": true}', Verdict(True)),
        (' {"ok": false, "reason": " no "} ', Verdict(False, "no")),
        ('```json\n{"ok": false, "reason": "r"}\n```', Verdict(False, "r")),
    ],
)
def test_verdicts_parse(answer: str, verdict: Verdict) -> None:
    assert parse_verdict(answer) == verdict


@pytest.mark.parametrize(
    "answer",
    ["", "yes", '{"ok": "yes"}', "[true]", '{"ok": false, "reason": 3}', '{"reason": "x"}'],
)
def test_malformed_verdicts_are_errors(answer: str) -> None:
    with pytest.raises(VerdictError):
        parse_verdict(answer)


def test_ok_false_blocks_like_exit_2_per_event() -> None:
    no = Verdict(False, "because")
    pre = verdict_effect(H, "PreToolUse", no)
    assert pre.decision == Decision.DENY and "because" in (pre.decision_reason or "")
    stop = verdict_effect(H, "Stop", no)
    assert stop.blocked and "because" in (stop.block_reason or "")
    post = verdict_effect(H, "PostToolUse", no)
    assert not post.blocked and any("because" in c for c in post.additional_context)
    ok = verdict_effect(H, "PreToolUse", Verdict(True))
    assert ok.decision is None and not ok.blocked  # ok is no objection, never an allow


def test_a_failed_model_hook_denies_only_where_it_guards() -> None:
    pre = failed_effect(H, "PreToolUse", "boom")
    assert pre.decision == Decision.DENY and "boom" in (pre.decision_reason or "")
    perm = failed_effect(H, "PermissionRequest", "boom")
    assert perm.perm_decision == Decision.DENY
    stop = failed_effect(H, "Stop", "boom")
    assert not stop.blocked and stop.decision is None and "boom" in stop.system_messages[0]


def test_prompt_hooks_parse_with_their_fields_and_without_a_prompt_fail_closed() -> None:
    warnings: list[str] = []
    hooks = [
        {"type": "prompt", "prompt": "ok?", "timeout": 5, "model": "sonnet"},
        {"type": "prompt"},
    ]
    parsed = parse_hooks_config(
        {"PreToolUse": [{"hooks": hooks}]}, policy=False, warn=warnings.append
    )
    good, bad = parsed["PreToolUse"]
    assert (good.kind, good.command, good.timeout_s, good.model) == ("prompt", "ok?", 5.0, "sonnet")
    assert good.unrunnable is None and bad.unrunnable is not None
    assert warnings == [
        "hooks.PreToolUse[0].hooks[1]: prompt hook without a 'prompt' string; every call it matches is denied"
    ]


async def test_without_a_model_a_prompt_guard_denies(tmp_path: Path) -> None:
    config = {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "ok?"}]}]}
    r = HookRunner(config, session=HookSession("s", None, tmp_path))
    assert r.warnings == ()  # a prompt hook is a type Nerve runs
    out = await r.pre_tool_use(
        tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="t", permission_mode="default"
    )
    assert out.decision == Decision.DENY and "no model is available" in (out.decision_reason or "")
