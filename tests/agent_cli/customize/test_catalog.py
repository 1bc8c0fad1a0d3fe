"""The Skill tool over the real catalog, through the real pipeline and permission engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.customize.catalog import CommandCatalog, listing_for_prompt
from agent_cli.customize.commands import load_prompt_commands
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext, RuleSource
from tests.agent_cli.customize.showcase import make_showcase
from tools.context import ToolOptions, ToolServices, ToolUseContext
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import CallOutcome, ToolCall
from tools.registry import get_all_base_tools


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("NERVE_CONFIG_DIR", str(home / ".nerve"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    return make_showcase(tmp_path / "project")


def _ctx(project: Path, *rules: tuple[str, str], trusted: bool = True) -> ToolUseContext:
    commands = load_prompt_commands(project, project_trusted=trusted)
    perms = PermissionContext(
        cwd=project,
        rules=tuple(make_rule(t, b, RuleSource.USER, project) for b, t in rules),
    )
    catalog = CommandCatalog(commands, project_dir=project, session_id=lambda: "sid-1")
    options = ToolOptions(tools=tuple(get_all_base_tools()), services=ToolServices(skills=catalog))
    return ToolUseContext(permissions=perms, options=options)


async def _skill(ctx: ToolUseContext, **inp: Any) -> CallOutcome:
    return await run_tool_call(ToolCall("s1", "Skill", inp), ctx)


def test_listing_names_what_the_model_may_load(project: Path) -> None:
    listing = listing_for_prompt(load_prompt_commands(project))
    assert "- release-notes: Draft release notes" in listing
    assert "- pr-review: Review a pull request" in listing
    assert "deploy" not in listing  # disable-model-invocation


async def test_loading_a_skill_runs_without_a_prompt_and_grants_its_rules(project: Path) -> None:
    ctx = _ctx(project)
    out = await _skill(ctx, skill="release-notes")
    assert not out.is_error, out.tool_result
    text = out.tool_result["content"]
    skill_dir = project / ".claude/skills/release-notes"
    assert f"Base directory for this skill: {skill_dir}" in text
    assert f"python3 {skill_dir}/scripts/collect.py" in text  # ${CLAUDE_SKILL_DIR} expanded
    assert out.context_modifier is not None
    after = out.context_modifier(ctx)
    added = {(r.source.value, str(r.value)) for r in after.permissions.rules}
    assert ("command", "Bash(python3:*)") in added  # for this turn (the session drops it)
    assert ("session", f"Read(/{skill_dir}/**)") in added  # files beside SKILL.md

    run = await run_tool_call(
        ToolCall("b1", "Bash", {"command": f"python3 {skill_dir}/scripts/collect.py"}), after
    )
    assert run.tool_result["content"] == "SKILL-HELPER-OUTPUT"


async def test_skill_rules(project: Path) -> None:
    denied = await _skill(_ctx(project, ("deny", "Skill(release-notes)")), skill="release-notes")
    assert denied.is_error and denied.verdict is not None
    assert denied.verdict.decision is Decision.DENY
    asked = await _skill(_ctx(project, ("ask", "Skill")), skill="/pr-review", args="12")
    assert asked.is_error and "no one is here to grant it" in str(asked.tool_result["content"])
    everything = await _skill(_ctx(project, ("deny", "Skill(pr-review *)")), skill="pr-review")
    assert everything.is_error  # `name *` also covers the bare name


async def test_unknown_or_user_only_commands_are_not_loadable(project: Path) -> None:
    out = await _skill(_ctx(project), skill="deploy")
    assert out.is_error and "Unknown skill 'deploy'" in out.tool_result["content"]
    assert "release-notes" in out.tool_result["content"]  # the list of what exists


async def test_a_command_loaded_by_the_model_expands_like_a_typed_one(project: Path) -> None:
    out = await _skill(_ctx(project), skill="commit", args="tidy")
    text = out.tool_result["content"]
    assert "- Current branch: main" in text and "Message hint: tidy" in text


async def test_untrusted_project_skill_grants_nothing(project: Path) -> None:
    notes: list[str] = []
    ctx = _ctx(project, trusted=False)
    from dataclasses import replace

    ctx = replace(ctx, callbacks=replace(ctx.callbacks, notify=notes.append))
    out = await _skill(ctx, skill="release-notes")
    assert out.context_modifier is not None
    rules = out.context_modifier(ctx).permissions.rules
    assert all(r.source is not RuleSource.COMMAND for r in rules)
    assert notes and "not applied until you trust this folder" in notes[0]


async def test_files_beside_a_user_skill_become_readable(project: Path, tmp_path: Path) -> None:
    skill = tmp_path / "home/.claude/skills/style"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: house style\n---\nSee reference.md.\n")
    (skill / "reference.md").write_text("REFERENCE\n")
    ctx = _ctx(project)
    read = ToolCall("r1", "Read", {"file_path": str(skill / "reference.md")})
    before = await run_tool_call(read, ctx)
    assert before.is_error  # outside the working directories: asks, and no one is here
    out = await _skill(ctx, skill="style")
    assert out.context_modifier is not None
    after = await run_tool_call(read, out.context_modifier(ctx))
    assert not after.is_error and "REFERENCE" in str(after.tool_result["content"])
