"""Issue 22 items 3 and 4 through the real pipeline: who asks, and the file tools' boundary."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.tools.pipeline_helpers import ScriptedPrompts
from tests.tools.sandbox.support import World, needs_sandbox
from tools.builtin.bash import BASH_TOOL
from tools.builtin.glob import TOOLS as GLOB_TOOLS
from tools.builtin.grep import TOOLS as GREP_TOOLS
from tools.builtin.read import TOOLS as READ_TOOLS
from tools.builtin.write import TOOLS as WRITE_TOOLS
from tools.context import Callbacks, PermissionAnswer, PermissionResponse, ToolUseContext
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import CallOutcome, ToolCall
from tools.sandbox import SandboxSession, with_boundary_rules
from tools.sandbox.platform import Bubblewrap

TOOLS = (BASH_TOOL, *READ_TOOLS, *WRITE_TOOLS, *GREP_TOOLS, *GLOB_TOOLS)


def _ctx(world: World, prompts: ScriptedPrompts | None = None) -> ToolUseContext:
    ctx = world.ctx()
    sandbox = world.session()
    return replace(
        ctx,
        permissions=with_boundary_rules(ctx.permissions, sandbox.config),
        options=replace(ctx.options, tools=TOOLS),
        callbacks=Callbacks(request_permission=prompts or ScriptedPrompts([])),
    )


async def _call(ctx: ToolUseContext, name: str, **inp: Any) -> CallOutcome:
    return await run_tool_call(ToolCall("t1", name, inp), ctx)


@needs_sandbox
async def test_a_sandboxed_command_runs_without_asking(world: World) -> None:
    out = await _call(_ctx(world), "Bash", command="touch made-by-sandbox && echo done")
    assert not out.is_error, out.tool_result
    assert (world.project / "made-by-sandbox").exists()  # ScriptedPrompts([]) was never asked


@needs_sandbox
async def test_regular_mode_dangerous_flag_and_excluded_commands_ask(world: World) -> None:
    no = PermissionResponse(PermissionAnswer.DENY)
    world.session(auto_allow=False)
    prompts = ScriptedPrompts([no])
    assert (await _call(_ctx(world, prompts), "Bash", command="touch a")).is_error
    world.session(auto_allow=True, excluded_commands=("touch *",))
    prompts = ScriptedPrompts([no, no])
    ctx = _ctx(world, prompts)
    assert (await _call(ctx, "Bash", command="touch b")).is_error
    out = await _call(ctx, "Bash", command="mkdir c", dangerouslyDisableSandbox=True)
    assert out.is_error and len(prompts.prompts) == 2
    assert not any((world.project / n).exists() for n in "abc")


async def test_no_auto_allow_without_a_working_sandbox(world: World) -> None:
    world.sandbox = SandboxSession(world.config, backend=Bubblewrap("/no/such/bwrap"))
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.DENY)])
    out = await _call(_ctx(world, prompts), "Bash", command="touch should-ask")
    assert out.is_error and len(prompts.prompts) == 1
    assert not (world.project / "should-ask").exists()


@needs_sandbox
async def test_deny_rules_still_deny_a_sandboxed_command(world: World) -> None:
    from permissions.rules import make_rule

    world.rules = (make_rule("Bash(touch:*)", "deny", "userSettings"),)
    out = await _call(_ctx(world), "Bash", command="touch denied")
    assert out.is_error and "deny rule Bash(touch:*)" in str(out.tool_result["content"])


async def test_read_and_search_refuse_denyread_paths(world: World) -> None:
    secret = world.project / "secrets"
    secret.mkdir()
    (secret / "key.txt").write_text("needle in secret\n")
    (world.project / "open.txt").write_text("needle in the open\n")
    world.session(deny_read=(str(secret),))
    ctx = _ctx(world)
    out = await _call(ctx, "Read", file_path=str(secret / "key.txt"))
    assert out.is_error and "Read(//" in str(out.tool_result["content"])
    out = await _call(ctx, "Grep", pattern="needle", path=str(world.project))
    content = str(out.tool_result["content"])
    assert "open.txt" in content and "key.txt" not in content
    out = await _call(ctx, "Glob", pattern="**/*.txt", path=str(world.project))
    assert "open.txt" in str(out.tool_result["content"])
    assert "key.txt" not in str(out.tool_result["content"])


async def test_write_refuses_what_the_sandbox_would(world: World) -> None:
    world.session(deny_write=(str(world.project / "generated"),))
    (world.project / "generated").mkdir()
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    ctx = _ctx(world, prompts)
    outside = world.outside / "new.txt"
    out = await _call(ctx, "Write", file_path=str(outside), content="x")
    assert out.is_error and "outside its writable directories" in str(out.tool_result["content"])
    out = await _call(ctx, "Write", file_path=str(world.project / "generated" / "f"), content="x")
    assert out.is_error and "Edit(//" in str(out.tool_result["content"])
    assert not outside.exists() and prompts.prompts == []  # refused, never offered to approve
    out = await _call(ctx, "Write", file_path=str(world.project / "ok.txt"), content="x")
    assert not out.is_error and (world.project / "ok.txt").read_text() == "x"


async def test_the_boundary_goes_with_the_sandbox(world: World) -> None:
    world.session(enabled=False, deny_read=(str(world.outside),))
    prompts = ScriptedPrompts([PermissionResponse(PermissionAnswer.ALLOW)])
    out = await _call(_ctx(world, prompts), "Read", file_path=str(world.outside / "file.txt"))
    assert not out.is_error  # sandbox off: reading outside asks as usual, and was approved
    assert "outside" in str(out.tool_result["content"]) and len(prompts.prompts) == 1
