"""EnterWorktree / ExitWorktree with real git: the worktree, the modifier that moves the session
(and its permission boundary), keep or remove, and never a silent loss of uncommitted work."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from permissions.types import Decision, PermissionMode, ReasonKind, Verdict
from tests.tools.pipeline_helpers import ScriptedPrompts, hook_runner, hook_script, make_ctx, rules
from tools.base import build_tool
from tools.builtin._git_worktree import create_or_reuse
from tools.builtin.bash import BASH_TOOL
from tools.builtin.worktree import (
    ENTER_WORKTREE,
    EXIT_WORKTREE,
    current_worktree,
)
from tools.builtin.write import write_tool
from tools.context import (
    Callbacks,
    PermissionAnswer,
    PermissionResponse,
    ToolUseContext,
    create_subagent_context,
)
from tools.pipeline.executor import StreamingToolExecutor
from tools.pipeline.steps import CallOutcome, ToolCall, run_tool_call
from tools.result import ToolResult

YES = PermissionResponse(PermissionAnswer.ALLOW)
NO = PermissionResponse(PermissionAnswer.DENY)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in {
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("print('hi')\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root.resolve()


class _CwdIn(BaseModel):
    label: str = ""


def _cwd_recorder(seen: list[tuple[str, Path]]) -> Any:
    async def call(inp: _CwdIn, ctx: ToolUseContext, _p: Any) -> ToolResult:
        seen.append((inp.label, ctx.cwd))
        return ToolResult(str(ctx.cwd))

    return build_tool(
        name="Where", input_model=_CwdIn, call=call, is_read_only=True, is_concurrency_safe=True
    )


def _ctx(repo: Path, prompts: ScriptedPrompts | None = None, **kw: Any) -> ToolUseContext:
    tools = (ENTER_WORKTREE, EXIT_WORKTREE, write_tool, BASH_TOOL, *kw.pop("tools", ()))
    kw.setdefault("rule_set", rules(("EnterWorktree", "allow")))
    return make_ctx(tools, cwd=repo, prompts=prompts or ScriptedPrompts(), **kw)


async def _run(ctx: ToolUseContext, tool: str, call_id: str = "t1", **inp: Any) -> CallOutcome:
    return await run_tool_call(ToolCall(call_id, tool, inp), ctx)


async def _enter(ctx: ToolUseContext, name: str = "feat") -> tuple[CallOutcome, ToolUseContext]:
    out = await _run(ctx, "EnterWorktree", name=name)
    assert not out.is_error, out.tool_result
    assert out.context_modifier is not None
    return out, out.context_modifier(ctx)


async def test_enter_creates_the_worktree_and_moves_the_session(repo: Path) -> None:
    out, inside = await _enter(_ctx(repo))
    path = repo / ".nerve" / "worktrees" / "feat"
    assert (path / "app.py").read_text() == "print('hi')\n"
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "worktree-feat"
    assert inside.cwd == path and inside.permissions.working_dirs == (path,)
    session = current_worktree(inside)
    assert session is not None and session.original_cwd == repo and session.created
    assert f"Created worktree at {path} on branch worktree-feat" in out.tool_result["content"]
    assert git(repo, "status", "--porcelain") == ""  # the checkout never shows in the repo


async def test_the_permission_boundary_follows(repo: Path) -> None:
    prompts = ScriptedPrompts([NO])
    _, inside = await _enter(_ctx(repo, prompts))
    inside = inside.with_mode(PermissionMode.ACCEPT_EDITS)
    wt = inside.cwd
    made = await _run(inside, "Write", file_path=str(wt / "new.py"), content="x = 1\n")
    assert not made.is_error and (wt / "new.py").exists()  # inside: acceptEdits allows it
    outside = await _run(inside, "Write", "t2", file_path=str(repo / "new.py"), content="x\n")
    assert outside.is_error and not (repo / "new.py").exists()
    assert "outside the working directories" in prompts.prompts[0].verdict.reason


async def test_in_a_batch_the_calls_after_enter_and_exit_see_the_new_directory(
    repo: Path,
) -> None:
    seen: list[tuple[str, Path]] = []
    ctx = _ctx(repo, tools=(_cwd_recorder(seen),), rule_set=rules(("EnterWorktree", "allow")))
    ex = StreamingToolExecutor(ctx)
    ex.add(ToolCall("w1", "Where", {"label": "before"}))
    ex.add(ToolCall("e", "EnterWorktree", {"name": "batch"}))
    ex.add(ToolCall("b", "Bash", {"command": "pwd"}))
    ex.add(ToolCall("w2", "Where", {"label": "inside"}))
    ex.add(ToolCall("x", "ExitWorktree", {"action": "keep"}))
    ex.add(ToolCall("w3", "Where", {"label": "after"}))
    outcomes = await ex.finish()
    assert not any(o.is_error for o in outcomes), [o.tool_result for o in outcomes]
    wt = repo / ".nerve" / "worktrees" / "batch"
    assert seen == [("before", repo), ("inside", wt), ("after", repo)]
    bash = next(o for o in outcomes if o.tool_use_id == "b")
    assert str(wt) in bash.tool_result["content"]
    assert wt.is_dir()  # kept
    assert current_worktree(ex.current_context) is None


async def test_keep_returns_without_asking(repo: Path) -> None:
    _, inside = await _enter(_ctx(repo))
    out = await _run(inside, "ExitWorktree", "t2", action="keep")
    assert not out.is_error, out.tool_result
    back = out.context_modifier(inside)  # type: ignore[misc]
    assert back.cwd == repo and current_worktree(back) is None
    assert (repo / ".nerve/worktrees/feat").is_dir()
    assert "worktree-feat" in git(repo, "branch", "--list")


async def test_remove_of_a_clean_worktree_asks_then_deletes_it_and_its_branch(
    repo: Path,
) -> None:
    prompts = ScriptedPrompts([YES])
    _, inside = await _enter(_ctx(repo, prompts))
    out = await _run(inside, "ExitWorktree", "t2", action="remove")
    assert not out.is_error, out.tool_result
    (prompt,) = prompts.prompts
    assert "Delete" in (prompt.preview or "") and prompt.verdict.safety is None
    assert not (repo / ".nerve/worktrees/feat").exists()
    assert "worktree-feat" not in git(repo, "branch", "--list")
    assert out.context_modifier(inside).cwd == repo  # type: ignore[misc]


async def test_uncommitted_work_is_never_removed_without_discard_changes(repo: Path) -> None:
    _, inside = await _enter(_ctx(repo))
    (inside.cwd / "draft.txt").write_text("unsaved thoughts\n")
    out = await _run(inside, "ExitWorktree", "t2", action="remove")
    assert out.is_error
    assert "1 uncommitted file(s)" in out.tool_result["content"]
    assert "draft.txt" in out.tool_result["content"]
    assert (inside.cwd / "draft.txt").exists()


async def test_discarding_work_needs_a_human_even_in_bypass_mode(repo: Path) -> None:
    prompts = ScriptedPrompts([NO, YES])
    _, inside = await _enter(_ctx(repo, prompts))
    wt = inside.cwd
    (wt / "feature.py").write_text("new = True\n")
    git(wt, "add", ".")
    git(wt, "commit", "-q", "-m", "work only on the branch")
    bypass = inside.with_mode(PermissionMode.BYPASS)
    first = await _run(bypass, "ExitWorktree", "t2", action="remove", discard_changes=True)
    assert first.is_error and wt.is_dir()  # the human said no
    prompt = prompts.prompts[0]
    assert prompt.verdict.safety is not None and not prompt.verdict.safety.classifier_approvable
    assert "1 commit(s) not on the original checkout" in (prompt.preview or "")
    second = await _run(bypass, "ExitWorktree", "t3", action="remove", discard_changes=True)
    assert not second.is_error, second.tool_result
    assert not wt.exists() and "worktree-feat" not in git(repo, "branch", "--list")


async def test_dont_ask_mode_never_discards_work(repo: Path) -> None:
    _, inside = await _enter(_ctx(repo))
    (inside.cwd / "draft.txt").write_text("x\n")
    quiet = inside.with_mode(PermissionMode.DONT_ASK)
    out = await _run(quiet, "ExitWorktree", "t2", action="remove", discard_changes=True)
    assert out.is_error and (inside.cwd / "draft.txt").exists()


async def test_entering_again_or_from_a_subagent_or_outside_git_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    _, inside = await _enter(_ctx(repo))
    again = await _run(inside, "EnterWorktree", "t2", name="other")
    assert again.is_error and "Already in worktree 'feat'" in again.tool_result["content"]
    child = create_subagent_context(_ctx(repo), agent_id="a1", system_prompt="")
    sub = await _run(child, "EnterWorktree", "t3", name="x")
    assert sub.is_error and "sub-agent" in sub.tool_result["content"]
    plain = tmp_path / "plain"
    plain.mkdir()
    nogit = await _run(_ctx(plain), "EnterWorktree", "t4", name="x")
    assert nogit.is_error and "not inside a git repository" in nogit.tool_result["content"]
    bad = await _run(_ctx(repo), "EnterWorktree", "t5", name="../escape")
    assert bad.is_error and "invalid worktree name" in bad.tool_result["content"]


async def test_exit_without_a_worktree_changes_nothing(repo: Path) -> None:
    out = await _run(_ctx(repo), "ExitWorktree", action="remove")
    assert out.is_error and "No worktree session is active" in out.tool_result["content"]


async def test_enter_asks_without_a_rule_and_is_refused_in_plan_mode(repo: Path) -> None:
    prompts = ScriptedPrompts([NO])
    asked = await _run(_ctx(repo, prompts, rule_set=()), "EnterWorktree", name="p")
    assert asked.is_error and len(prompts.prompts) == 1
    plan = _ctx(repo, rule_set=(), mode=PermissionMode.PLAN)
    refused = await _run(plan, "EnterWorktree", name="p")
    assert refused.is_error and "plan mode" in refused.tool_result["content"]
    assert not (repo / ".nerve/worktrees/p").exists()


def test_an_existing_worktree_is_reentered_and_local_settings_follow(repo: Path) -> None:
    (repo / ".nerve").mkdir()
    (repo / ".nerve/settings.local.json").write_text('{"permissions": {"allow": ["Bash(ls)"]}}')
    first = create_or_reuse(repo, "again")
    assert first.created
    copied = first.path / ".nerve/settings.local.json"
    assert copied.read_text() == '{"permissions": {"allow": ["Bash(ls)"]}}'
    second = create_or_reuse(repo, "again")
    assert not second.created and second.path == first.path


async def test_the_modifier_leaves_the_context_it_was_given_untouched(repo: Path) -> None:
    ctx = _ctx(repo)
    _out, inside = await _enter(ctx)
    assert ctx.cwd == repo and current_worktree(ctx) is None
    assert inside.options.services is not ctx.options.services


class _ApproveEverything:
    """An auto-mode classifier that would approve anything it is allowed to decide."""

    def __init__(self) -> None:
        self.calls = 0

    async def classify(self, tool_name: str, tool_input: Any, ctx: ToolUseContext) -> Any:
        self.calls += 1
        return Verdict(Decision.ALLOW, "looks fine", ReasonKind.CLASSIFIER)


async def test_neither_the_classifier_nor_a_headless_run_discards_work(repo: Path) -> None:
    prompts = ScriptedPrompts([NO])
    _, inside = await _enter(_ctx(repo, prompts))
    (inside.cwd / "draft.txt").write_text("x\n")
    auto = replace(
        inside.with_mode(PermissionMode.AUTO),
        options=replace(
            inside.options,
            services=replace(inside.options.services, classifier=_ApproveEverything()),
        ),
    )
    out = await _run(auto, "ExitWorktree", "t2", action="remove", discard_changes=True)
    assert out.is_error and len(prompts.prompts) == 1  # a human was asked, and said no
    assert (inside.cwd / "draft.txt").exists()
    headless = replace(inside, callbacks=Callbacks())  # print mode: no one to ask
    out = await _run(headless, "ExitWorktree", "t3", action="remove", discard_changes=True)
    assert out.is_error and (inside.cwd / "draft.txt").exists()


async def test_a_pre_tool_hook_can_stop_enter_worktree(repo: Path, tmp_path: Path) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no worktrees on this machine",
        }
    }
    cmd = hook_script(tmp_path, "pre.sh", json.dumps(deny))
    config = {
        "PreToolUse": [{"matcher": "EnterWorktree", "hooks": [{"type": "command", "command": cmd}]}]
    }
    out = await _run(_ctx(repo, hooks=hook_runner(tmp_path, config)), "EnterWorktree", name="h")
    assert out.is_error and "no worktrees on this machine" in out.tool_result["content"]
    assert not (repo / ".nerve" / "worktrees" / "h").exists()
