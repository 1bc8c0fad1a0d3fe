"""Steps 7–9 and 12 through the real permission engine, the real bash analysis and the real
command-hook runner (hook scripts are real executables in tmp_path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from permissions.types import (
    Decision,
    PermissionMode,
    ReasonKind,
    RuleBehavior,
    RuleSource,
    RuleValue,
    Verdict,
)
from tests.tools.pipeline_helpers import (
    CommandIn,
    ScriptedPrompts,
    TextIn,
    bash_like_tool,
    hook_runner,
    hook_script,
    make_ctx,
    rules,
    simple_tool,
)
from tools.context import PermissionAnswer, PermissionResponse, ToolServices
from tools.pipeline.permission import REJECT_MESSAGE, REJECT_WITH_FEEDBACK
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import ToolCall
from tools.result import ToolResult


def bash(cmd: str, tid: str = "t1") -> ToolCall:
    return ToolCall(tid, "Bash", {"command": cmd})


def pre_hook(tmp_path: Path, answer: dict[str, Any], matcher: str = "Bash") -> Any:
    cmd = hook_script(tmp_path, "pre.sh", json.dumps(answer))
    config = {"PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": cmd}]}]}
    return hook_runner(tmp_path, config)


def decision(kind: str, reason: str = "", **extra: Any) -> dict[str, Any]:
    hso = {"hookEventName": "PreToolUse", "permissionDecision": kind}
    if reason:
        hso["permissionDecisionReason"] = reason
    hso.update(extra)
    return {"hookSpecificOutput": hso}


# the fail-closed default ---------------------------------------------------------------------


async def test_minimal_tool_asks_and_headless_denies_naming_the_reason() -> None:
    ran: list[str] = []

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        ran.append(inp.text)
        return ToolResult("ran")

    ctx = make_ctx([simple_tool(call=call)])  # default Callbacks: headless
    outcome = await run_tool_call(ToolCall("t1", "Plain", {"text": "x"}), ctx)
    assert ran == []
    assert outcome.is_error and outcome.error_class == "permission_denied"
    assert outcome.tool_result["content"] == (
        REJECT_WITH_FEEDBACK + "Plain needs permission and no one is here to grant it"
    )
    assert outcome.user_decided
    assert outcome.verdict is not None and outcome.verdict.decision is Decision.DENY


async def test_deny_rule_message_names_rule_and_source() -> None:
    ran: list[str] = []
    ctx = make_ctx([bash_like_tool(ran)], rule_set=rules(("Bash(rm:*)", "deny")))
    outcome = await run_tool_call(bash("rm -f x"), ctx)
    assert ran == []
    assert outcome.tool_result["content"] == (
        'Permission to use Bash with command "rm -f x" has been denied by the deny rule '
        "Bash(rm:*) from userSettings."
    )
    assert not outcome.user_decided


async def test_dont_ask_mode_denies_without_prompting() -> None:
    prompts = ScriptedPrompts()
    ctx = make_ctx([simple_tool()], mode=PermissionMode.DONT_ASK, prompts=prompts)
    outcome = await run_tool_call(ToolCall("t1", "Plain", {}), ctx)
    assert outcome.error_class == "permission_denied" and prompts.prompts == []
    assert "dontAsk mode" in outcome.tool_result["content"]


# the prompt ----------------------------------------------------------------------------------


async def test_prompt_allow_runs_once() -> None:
    ran: list[str] = []
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    ctx = make_ctx([bash_like_tool(ran)], prompts=prompts)
    outcome = await run_tool_call(bash("touch out.txt"), ctx)
    assert ran == ["touch out.txt"]
    (prompt,) = prompts.prompts
    assert prompt.title == "Bash(touch out.txt)" and prompt.input == {"command": "touch out.txt"}
    assert prompt.tool_use_id == "t1" and prompt.verdict.decision is Decision.ASK
    assert outcome.user_decided and outcome.verdict is not None
    assert outcome.verdict.kind is ReasonKind.USER and outcome.rules_to_persist == ()


async def test_allow_always_returns_rules_and_adds_session_rules() -> None:
    ran: list[str] = []
    rule = RuleValue("Bash", "touch:*")
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW_ALWAYS, rules=(rule,))])
    ctx = make_ctx([bash_like_tool(ran)], prompts=prompts)
    outcome = await run_tool_call(bash("touch a"), ctx)
    assert outcome.rules_to_persist == (rule,)
    assert outcome.context_modifier is not None
    after = outcome.context_modifier(ctx)
    added = after.permissions.rules[-1]
    assert (added.source, added.behavior, added.value) == (
        RuleSource.SESSION,
        RuleBehavior.ALLOW,
        rule,
    )
    # The next matching call runs without a prompt (ScriptedPrompts has no answers left).
    second = await run_tool_call(bash("touch b", "t2"), after)
    assert ran == ["touch a", "touch b"] and not second.user_decided


async def test_allow_always_without_rules_uses_the_engine_suggestion() -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW_ALWAYS)])
    outcome = await run_tool_call(
        ToolCall("t1", "Plain", {}), make_ctx([simple_tool()], prompts=prompts)
    )
    assert outcome.rules_to_persist == (RuleValue("Plain"),)


async def test_user_no_with_feedback_goes_to_the_model() -> None:
    ran: list[str] = []
    prompts = ScriptedPrompts(
        [PermissionResponse(PermissionAnswer.DENY, feedback="use a temp dir instead")]
    )
    outcome = await run_tool_call(bash("touch x"), make_ctx([bash_like_tool(ran)], prompts=prompts))
    assert ran == []
    assert outcome.tool_result["content"] == REJECT_WITH_FEEDBACK + "use a temp dir instead"


async def test_user_no_without_feedback() -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    outcome = await run_tool_call(bash("touch x"), make_ctx([bash_like_tool()], prompts=prompts))
    assert outcome.tool_result["content"] == REJECT_MESSAGE


async def test_user_updated_input_is_revalidated() -> None:
    ran: list[str] = []
    ok = ScriptedPrompts(
        [PermissionResponse(PermissionAnswer.ALLOW, updated_input={"command": "touch y"})]
    )
    outcome = await run_tool_call(bash("touch x"), make_ctx([bash_like_tool(ran)], prompts=ok))
    assert ran == ["touch y"]
    assert outcome.original_input == {"command": "touch x"}
    assert outcome.effective_input == {"command": "touch y"}
    bad = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW, updated_input={"cmd": 1})])
    outcome = await run_tool_call(bash("touch x"), make_ctx([bash_like_tool(ran)], prompts=bad))
    assert ran == ["touch y"] and outcome.error_class == "validation"
    assert "command: Field required" in outcome.tool_result["content"]


async def test_prepared_prompt_preview_and_approved_input_run() -> None:
    ran: list[str] = []

    async def prepare(inp: CommandIn, _ctx: Any) -> tuple[str, CommandIn]:
        return f"preview of {inp.command}", CommandIn(command=inp.command + " # simulated")

    tool = bash_like_tool(ran)
    from dataclasses import replace

    tool = replace(tool, prepare_prompt=prepare)
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    await run_tool_call(bash("sed -i s/a/b/ f"), make_ctx([tool], prompts=prompts))
    assert prompts.prompts[0].preview == "preview of sed -i s/a/b/ f"
    assert ran == ["sed -i s/a/b/ f # simulated"]


# hooks ---------------------------------------------------------------------------------------


async def test_hook_deny_is_final_even_with_an_allow_rule(tmp_path: Path) -> None:
    ran: list[str] = []
    ctx = make_ctx(
        [bash_like_tool(ran)],
        rule_set=rules(("Bash(touch:*)", "allow")),
        hooks=pre_hook(tmp_path, decision("deny", "no touching today")),
    )
    outcome = await run_tool_call(bash("touch x"), ctx)
    assert ran == []
    assert outcome.verdict is not None and outcome.verdict.kind is ReasonKind.HOOK
    assert outcome.tool_result["content"] == (
        'Permission to use Bash with command "touch x" has been denied: no touching today.'
    )


async def test_hook_allow_does_not_override_a_deny_rule(tmp_path: Path) -> None:
    ran: list[str] = []
    ctx = make_ctx(
        [bash_like_tool(ran)],
        rule_set=rules(("Bash(rm:*)", "deny", "projectSettings")),
        hooks=pre_hook(tmp_path, decision("allow", "looks fine")),
    )
    outcome = await run_tool_call(bash("rm -f x"), ctx)
    assert ran == []
    assert outcome.tool_result["content"].endswith(
        "denied by the deny rule Bash(rm:*) from projectSettings."
    )


async def test_hook_allow_does_not_override_an_ask_rule(tmp_path: Path) -> None:
    ran: list[str] = []
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    ctx = make_ctx(
        [bash_like_tool(ran)],
        rule_set=rules(("Bash(git push:*)", "ask")),
        prompts=prompts,
        hooks=pre_hook(tmp_path, decision("allow")),
    )
    outcome = await run_tool_call(bash("git push origin main"), ctx)
    assert len(prompts.prompts) == 1 and prompts.prompts[0].verdict.kind is ReasonKind.RULE
    assert ran == [] and outcome.error_class == "permission_denied"


async def test_hook_allow_lifts_the_mode_default_ask(tmp_path: Path) -> None:
    ran: list[str] = []
    prompts = ScriptedPrompts()  # fails if asked
    ctx = make_ctx(
        [bash_like_tool(ran)], prompts=prompts, hooks=pre_hook(tmp_path, decision("allow", "ok"))
    )
    outcome = await run_tool_call(bash("touch x"), ctx)
    assert ran == ["touch x"] and prompts.prompts == []
    assert outcome.verdict is not None and outcome.verdict.kind is ReasonKind.HOOK


async def test_hook_rewritten_input_is_checked_again_by_the_rules(tmp_path: Path) -> None:
    ran: list[str] = []
    answer = decision("allow", updatedInput={"command": "rm -f x"})
    ctx = make_ctx(
        [bash_like_tool(ran)],
        rule_set=rules(("Bash(rm:*)", "deny"), ("Bash(echo:*)", "allow")),
        hooks=pre_hook(tmp_path, answer),
    )
    outcome = await run_tool_call(bash("echo hi"), ctx)
    assert ran == []
    assert "denied by the deny rule Bash(rm:*)" in outcome.tool_result["content"]
    assert outcome.original_input == {"command": "echo hi"}


async def test_hook_rewritten_input_runs_when_allowed(tmp_path: Path) -> None:
    ran: list[str] = []
    answer = decision("allow", updatedInput={"command": "echo rewritten"})
    ctx = make_ctx([bash_like_tool(ran)], hooks=pre_hook(tmp_path, answer))
    outcome = await run_tool_call(bash("echo hi"), ctx)
    assert ran == ["echo rewritten"]
    assert outcome.effective_input == {"command": "echo rewritten"}


async def test_hook_rewrite_to_invalid_input_is_an_error(tmp_path: Path) -> None:
    ran: list[str] = []
    ctx = make_ctx(
        [bash_like_tool(ran)], hooks=pre_hook(tmp_path, decision("allow", updatedInput={"x": 1}))
    )
    outcome = await run_tool_call(bash("echo hi"), ctx)
    assert ran == [] and outcome.error_class == "validation"
    assert outcome.tool_result["content"].startswith(
        "PreToolUse hook returned invalid input: InputValidationError: Bash failed: command:"
    )


async def test_hook_context_and_stop(tmp_path: Path) -> None:
    answer = {
        "continue": False,
        "stopReason": "end of shift",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "be brief"},
    }
    ctx = make_ctx(
        [bash_like_tool()],
        rule_set=rules(("Bash(echo:*)", "allow")),
        hooks=pre_hook(tmp_path, answer),
    )
    outcome = await run_tool_call(bash("echo hi"), ctx)
    assert outcome.tool_result["content"] == "ran echo hi"
    assert outcome.stop_turn and outcome.stop_reason == "end of shift"
    (msg,) = outcome.new_messages
    assert msg["role"] == "user"
    assert "be brief" in msg["content"][0]["text"]
    assert msg["content"][0]["text"].startswith("<system-reminder>")


async def test_post_hook_replaces_mcp_output_only(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedMCPToolOutput": "redacted",
            "additionalContext": "output was filtered",
        }
    }
    cmd = hook_script(tmp_path, "post.sh", json.dumps(answer))
    hooks = hook_runner(
        tmp_path,
        {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": cmd}]}]},
    )

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        return ToolResult("token=abc123")

    mcp = simple_tool("mcp__vault__get", call=call, is_mcp=True, is_read_only=True)
    local = simple_tool("Local", call=call, is_read_only=True)
    ctx = make_ctx([mcp, local], hooks=hooks, rule_set=rules(("mcp__vault", "allow")))
    out_mcp = await run_tool_call(ToolCall("t1", "mcp__vault__get", {}), ctx)
    out_local = await run_tool_call(ToolCall("t2", "Local", {}), ctx)
    assert out_mcp.tool_result["content"] == "redacted"
    assert out_local.tool_result["content"] == "token=abc123"
    assert "output was filtered" in out_local.new_messages[0]["content"][0]["text"]


async def test_permission_request_hook_answers_the_prompt(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    cmd = hook_script(tmp_path, "perm.sh", json.dumps(answer))
    hooks = hook_runner(
        tmp_path,
        {
            "PermissionRequest": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": cmd}]}
            ]
        },
    )
    ran: list[str] = []
    prompts = ScriptedPrompts()
    outcome = await run_tool_call(
        bash("touch x"), make_ctx([bash_like_tool(ran)], hooks=hooks, prompts=prompts)
    )
    assert ran == ["touch x"] and prompts.prompts == []
    assert outcome.verdict is not None and outcome.verdict.kind is ReasonKind.HOOK


# auto mode -----------------------------------------------------------------------------------


class ScriptedClassifier:
    def __init__(self, verdict: Verdict | None) -> None:
        self.verdict = verdict
        self.calls = 0

    async def classify(self, tool_name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
        self.calls += 1
        return self.verdict


async def test_auto_mode_uses_the_classifier_verdict() -> None:
    for verdict, runs in (
        (Verdict(Decision.ALLOW, "harmless"), True),
        (Verdict(Decision.DENY, "exfiltration risk"), False),
    ):
        ran: list[str] = []
        clf = ScriptedClassifier(verdict)
        ctx = make_ctx(
            [bash_like_tool(ran)],
            mode=PermissionMode.AUTO,
            services=ToolServices(classifier=clf),
            prompts=ScriptedPrompts(),
        )
        outcome = await run_tool_call(bash("touch x"), ctx)
        assert clf.calls == 1 and (ran == ["touch x"]) is runs
        assert outcome.verdict is not None and outcome.verdict.kind is ReasonKind.CLASSIFIER
        if not runs:
            assert outcome.tool_result["content"].endswith("denied: exfiltration risk.")


async def test_auto_mode_without_a_classifier_opinion_asks_the_user() -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    ctx = make_ctx(
        [bash_like_tool()],
        mode=PermissionMode.AUTO,
        services=ToolServices(classifier=ScriptedClassifier(None)),
        prompts=prompts,
    )
    outcome = await run_tool_call(bash("touch x"), ctx)
    assert len(prompts.prompts) == 1 and not outcome.is_error


async def test_classifier_never_approves_an_ask_rule() -> None:
    clf = ScriptedClassifier(Verdict(Decision.ALLOW, "fine"))
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    ctx = make_ctx(
        [bash_like_tool()],
        mode=PermissionMode.AUTO,
        rule_set=rules(("Bash(git push:*)", "ask")),
        services=ToolServices(classifier=clf),
        prompts=prompts,
    )
    outcome = await run_tool_call(bash("git push"), ctx)
    assert len(prompts.prompts) == 1 and outcome.error_class == "permission_denied"


async def test_hook_ask_forces_a_prompt_over_an_allow_rule(tmp_path: Path) -> None:
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    ctx = make_ctx(
        [bash_like_tool()],
        rule_set=rules(("Bash(echo:*)", "allow")),
        prompts=prompts,
        hooks=pre_hook(tmp_path, decision("ask", "double-check this one")),
    )
    outcome = await run_tool_call(bash("echo hi"), ctx)
    (prompt,) = prompts.prompts
    assert prompt.verdict.kind is ReasonKind.HOOK
    assert prompt.verdict.reason == "double-check this one"
    assert outcome.tool_result["content"] == "ran echo hi"


async def test_hook_allow_lifts_the_auto_mode_ask_without_a_classifier(tmp_path: Path) -> None:
    ran: list[str] = []
    ctx = make_ctx(
        [bash_like_tool(ran)],
        mode=PermissionMode.AUTO,
        prompts=ScriptedPrompts(),
        hooks=pre_hook(tmp_path, decision("allow")),
    )
    await run_tool_call(bash("touch x"), ctx)
    assert ran == ["touch x"]


async def test_failure_hook_context_reaches_the_model(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUseFailure",
            "additionalContext": "check the disk",
        }
    }
    cmd = hook_script(tmp_path, "fail.sh", json.dumps(answer))
    hooks = hook_runner(
        tmp_path,
        {"PostToolUseFailure": [{"matcher": "*", "hooks": [{"type": "command", "command": cmd}]}]},
    )

    async def call(inp: TextIn, _c: Any, _p: Any) -> ToolResult:
        raise OSError("disk full")

    tool = simple_tool("Disk", call=call, is_read_only=True)
    outcome = await run_tool_call(ToolCall("t1", "Disk", {}), make_ctx([tool], hooks=hooks))
    assert outcome.tool_result["content"] == "Error: OSError: disk full"
    assert "check the disk" in outcome.new_messages[0]["content"][0]["text"]


class InputJudge:
    """A classifier that allows only a command it was told is harmless, recording what it saw."""

    def __init__(self, harmless: str) -> None:
        self.harmless = harmless
        self.seen: list[str] = []

    async def classify(self, tool_name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
        self.seen.append(str(tool_input.get("command")))
        if tool_input.get("command") == self.harmless:
            return Verdict(Decision.ALLOW, "harmless")
        return Verdict(Decision.DENY, "not what was asked")


async def test_classifier_judges_the_input_a_hook_rewrote(tmp_path: Path) -> None:
    ran: list[str] = []
    judge = InputJudge(harmless="touch x")
    # The hook turns the harmless call into another one: the speculative verdict (for
    # "touch x") must not approve what actually runs.
    hooks = pre_hook(
        tmp_path,
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": {"command": "touch y"},
            }
        },
    )
    ctx = make_ctx(
        [bash_like_tool(ran)],
        mode=PermissionMode.AUTO,
        services=ToolServices(classifier=judge),
        prompts=ScriptedPrompts(),
        hooks=hooks,
    )
    outcome = await run_tool_call(bash("touch x"), ctx)
    assert ran == [] and outcome.is_error
    assert judge.seen[-1] == "touch y"


async def test_classifier_never_answers_a_hook_ask(tmp_path: Path) -> None:
    clf = ScriptedClassifier(Verdict(Decision.ALLOW, "fine"))
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    ctx = make_ctx(
        [bash_like_tool()],
        mode=PermissionMode.AUTO,
        services=ToolServices(classifier=clf),
        prompts=prompts,
        hooks=pre_hook(tmp_path, decision("ask", "a human must look at this")),
    )
    outcome = await run_tool_call(bash("touch x"), ctx)
    assert len(prompts.prompts) == 1 and outcome.error_class == "permission_denied"


async def test_permission_denied_hook_fires_for_classifier_denials_only(tmp_path: Path) -> None:
    marker = tmp_path / "fired.txt"
    script = tmp_path / "denied.sh"
    script.write_text(f"#!/bin/sh\ncat >> {marker}\necho >> {marker}\n")
    script.chmod(0o755)
    config = {"PermissionDenied": [{"hooks": [{"type": "command", "command": str(script)}]}]}
    # a deny rule: no PermissionDenied
    ctx = make_ctx(
        [bash_like_tool()],
        rule_set=rules(("Bash(rm:*)", "deny")),
        hooks=hook_runner(tmp_path, config),
    )
    await run_tool_call(bash("rm -f x"), ctx)
    assert not marker.exists()
    # the classifier says no: PermissionDenied runs with its reason
    ctx = make_ctx(
        [bash_like_tool()],
        mode=PermissionMode.AUTO,
        services=ToolServices(
            classifier=ScriptedClassifier(Verdict(Decision.DENY, "looks like exfiltration"))
        ),
        prompts=ScriptedPrompts(),
        hooks=hook_runner(tmp_path, config),
    )
    await run_tool_call(bash("touch x"), ctx)
    fired = json.loads(marker.read_text().strip())
    assert fired["hook_event_name"] == "PermissionDenied"
    assert "looks like exfiltration" in fired["reason"]
