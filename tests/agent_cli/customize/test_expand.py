"""Expanding a command body: arguments, ``!`cmd` `` through the real pipeline, ``@path`` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.customize.commands import PromptCommand
from agent_cli.customize.expand import command_header, expand_command, substitute
from permissions.rules import make_rule
from permissions.types import PermissionContext, RuleSource
from tools.context import ToolOptions, ToolUseContext
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import CallOutcome, ToolCall
from tools.registry import get_all_base_tools


def _cmd(body: str, name: str = "x", **kw: Any) -> PromptCommand:
    return PromptCommand(name, "d", body, Path("/p/.claude/commands/x.md"), "project", **kw)


def _runner(cwd: Path, *rules: tuple[str, str]) -> tuple[Any, list[ToolCall]]:
    perms = PermissionContext(
        cwd=cwd,
        rules=tuple(make_rule(text, behavior, RuleSource.SESSION, cwd) for behavior, text in rules),
    )
    ctx = ToolUseContext(permissions=perms, options=ToolOptions(tools=tuple(get_all_base_tools())))
    calls: list[ToolCall] = []

    async def run(tool: str, tool_input: dict[str, Any]) -> CallOutcome:
        call = ToolCall(f"c{len(calls)}", tool, tool_input)
        calls.append(call)
        return await run_tool_call(call, ctx)  # headless: an ask is a denial

    return run, calls


def test_arguments_one_based_by_default_zero_based_with_dollar_zero() -> None:
    v: dict[str, str] = {}
    assert substitute("fix $1 then $2", 'a "b c"', zero_based=False, variables=v) == (
        "fix a then b c",
        True,
    )
    assert substitute("$0/$1/$ARGUMENTS[1]", "a b", zero_based=True, variables=v)[0] == "a/b/b"
    # A missing positional stays as written (Claude Code does the same); $10 is not $1 + "0".
    assert substitute("$3 costs $10", "a", zero_based=False, variables=v)[0] == "$3 costs $10"
    assert substitute("no args here", "a", zero_based=False, variables=v) == ("no args here", False)
    text, _ = substitute(
        "${CLAUDE_SKILL_DIR}/run ${UNKNOWN}",
        "",
        zero_based=False,
        variables={"CLAUDE_SKILL_DIR": "/s"},
    )
    assert text == "/s/run ${UNKNOWN}"


async def test_arguments_appended_when_the_body_has_no_placeholder(tmp_path: Path) -> None:
    run, calls = _runner(tmp_path)
    out = await expand_command(_cmd("Do the thing."), "  now please ", run_tool=run, cwd=tmp_path)
    assert out.text == "Do the thing.\n\nARGUMENTS: now please" and calls == []
    assert command_header("pr-review", "123") == (
        "<command-message>pr-review</command-message>\n"
        "<command-name>/pr-review</command-name>\n"
        "<command-args>123</command-args>"
    )


async def test_bang_lines_run_through_the_pipeline(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    run, calls = _runner(tmp_path)
    body = "Files: !`ls`\nGreeting: !`cat f.txt`\nEmpty: !`true`\nArg: !`echo $1`"
    out = await expand_command(_cmd(body), "wow", run_tool=run, cwd=tmp_path)
    assert out.error is None
    assert out.text == "Files: f.txt\nGreeting: hello\nEmpty: \nArg: wow"
    assert [c.name for c in calls] == ["Bash"] * 4


async def test_a_denied_bang_line_stops_everything(tmp_path: Path) -> None:
    run, calls = _runner(tmp_path)
    body = "First: !`touch made.txt`\nThen: !`ls`"
    out = await expand_command(_cmd(body, name="mk"), "", run_tool=run, cwd=tmp_path)
    assert (
        out.error is not None and "/mk was not run" in out.error and "touch made.txt" in out.error
    )
    assert len(calls) == 1 and not (tmp_path / "made.txt").exists()


async def test_an_allow_rule_lets_a_bang_line_run(tmp_path: Path) -> None:
    run, _ = _runner(tmp_path, ("allow", "Bash(touch:*)"))
    out = await expand_command(_cmd("!`touch made.txt`"), "", run_tool=run, cwd=tmp_path)
    assert out.error is None and (tmp_path / "made.txt").exists()


async def test_arguments_cannot_smuggle_a_bang_line(tmp_path: Path) -> None:
    run, calls = _runner(tmp_path)
    out = await expand_command(_cmd("Say $ARGUMENTS"), "!`touch x`", run_tool=run, cwd=tmp_path)
    assert out.text == "Say !`touch x`" and calls == [] and not (tmp_path / "x").exists()


async def test_includes_go_through_read_and_its_rules(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/style.md").write_text("STYLE\n")
    (tmp_path / "secret.md").write_text("SECRET\n")
    run, calls = _runner(tmp_path, ("deny", "Read(./secret.md)"))
    body = "Follow @docs/style.md and @secret.md, not `@docs/style.md` or @types/node or a@b.c."
    out = await expand_command(_cmd(body), "", run_tool=run, cwd=tmp_path)
    assert out.error is None
    assert f"Contents of {tmp_path}/docs/style.md (@docs/style.md):" in out.text
    assert "STYLE" in out.text and "SECRET" not in out.text
    assert "(@secret.md was not included: permission denied)" in out.text
    assert any("@secret.md was not included" in n for n in out.notes)
    assert [c.input["file_path"] for c in calls] == [
        str(tmp_path / "docs/style.md"),
        str(tmp_path / "secret.md"),
    ]


async def test_includes_fall_back_to_the_project_root(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/style.md").write_text("ROOTSTYLE\n")
    (tmp_path / "src").mkdir()
    run, _ = _runner(tmp_path)
    out = await expand_command(
        _cmd("see @docs/style.md"), "", run_tool=run, cwd=tmp_path / "src", project_dir=tmp_path
    )
    assert "ROOTSTYLE" in out.text


@pytest.mark.parametrize("body", ["${CLAUDE_SKILL_DIR}/a", "${CLAUDE_PROJECT_DIR}/b"])
async def test_directory_variables(tmp_path: Path, body: str) -> None:
    run, _ = _runner(tmp_path)
    skill = _cmd(body, kind="skill", skill_dir=tmp_path / "skills/s")
    out = await expand_command(skill, "", run_tool=run, cwd=tmp_path, project_dir=tmp_path / "p")
    assert out.text in (f"{tmp_path}/skills/s/a", f"{tmp_path}/p/b")
