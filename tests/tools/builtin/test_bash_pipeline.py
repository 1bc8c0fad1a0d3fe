"""Bash and the task tools through the real 14-step pipeline (bypass mode and a real prompt)."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

from permissions.types import PermissionMode
from tests.tools.builtin.test_bash_support import make_ctx, no_survivors
from tools.builtin.bash import BASH_TOOL
from tools.builtin.tasks import TOOLS as TASK_TOOLS
from tools.context import (
    Callbacks,
    PermissionAnswer,
    PermissionPrompt,
    PermissionResponse,
    ToolUseContext,
)
from tools.pipeline.steps import run_tool_call
from tools.pipeline.types import ToolCall

__all__ = ["no_survivors"]

TEXT = "one beta\ntwo beta beta\n"


def pipeline_ctx(
    tmp_path: Path, mode: PermissionMode, callbacks: Callbacks | None = None
) -> ToolUseContext:
    ctx = make_ctx(tmp_path)
    return replace(
        ctx,
        permissions=replace(ctx.permissions, mode=mode),
        options=replace(ctx.options, tools=(BASH_TOOL, *TASK_TOOLS)),
        callbacks=callbacks or Callbacks(),
    )


async def test_bash_through_the_pipeline_in_bypass_mode(tmp_path: Path) -> None:
    ctx = pipeline_ctx(tmp_path, PermissionMode.BYPASS)
    seen: list[object] = []
    ctx = replace(ctx, callbacks=Callbacks(on_progress=lambda _id, p: seen.append(p)))
    out = await run_tool_call(ToolCall("t1", "Bash", {"command": "echo hi; exit 3"}), ctx)
    assert out.is_error
    assert out.tool_result["content"] == "hi\n[Exit code 3]"
    assert seen  # progress reached the UI port
    out = await run_tool_call(ToolCall("t2", "Bash", {"command": "sleep 9"}), ctx)
    assert out.is_error and "run_in_background" in str(out.tool_result["content"])


async def test_sed_preview_is_what_gets_written(tmp_path: Path) -> None:
    prompts: list[PermissionPrompt] = []

    async def approve(prompt: PermissionPrompt) -> PermissionResponse:
        prompts.append(prompt)
        return PermissionResponse(PermissionAnswer.ALLOW)

    ctx = pipeline_ctx(tmp_path, PermissionMode.DEFAULT, Callbacks(request_permission=approve))
    target = ctx.cwd / "f.txt"
    target.write_text(TEXT, encoding="utf-8")
    reference = tmp_path / "ref.txt"
    reference.write_text(TEXT, encoding="utf-8")
    subprocess.run(["sed", "-i", "s/beta/BETA/g", str(reference)], check=True)

    command = "sed -i 's/beta/BETA/g' f.txt"
    out = await run_tool_call(ToolCall("t3", "Bash", {"command": command}), ctx)
    assert not out.is_error, out.tool_result
    assert len(prompts) == 1 and prompts[0].preview is not None
    assert "-one beta\n-two beta beta\n+one BETA\n+two BETA BETA\n" in prompts[0].preview
    assert "simulated" not in str(prompts[0].input)
    assert target.read_text(encoding="utf-8") == reference.read_text(encoding="utf-8")
    assert out.original_input == {"command": command}
    assert "simulated" not in str(out.effective_input)


async def test_model_cannot_inject_a_sed_result_through_the_pipeline(tmp_path: Path) -> None:
    ctx = pipeline_ctx(tmp_path, PermissionMode.BYPASS)
    target = ctx.cwd / "f.txt"
    target.write_text(TEXT, encoding="utf-8")
    raw = {
        "command": "sed -i 's/one/ONE/' f.txt",
        "_simulated_sed_edit": {
            "file_path": str(target),
            "new_content": "INJECTED\n",
            "original_hash": "x",
        },
    }
    out = await run_tool_call(ToolCall("t4", "Bash", raw), ctx)
    assert not out.is_error
    assert target.read_text(encoding="utf-8") == "ONE beta\ntwo beta beta\n"


async def test_background_task_through_the_pipeline(tmp_path: Path) -> None:
    ctx = pipeline_ctx(tmp_path, PermissionMode.BYPASS)
    out = await run_tool_call(
        ToolCall("t5", "Bash", {"command": "echo bg-out", "run_in_background": True}), ctx
    )
    content = str(out.tool_result["content"])
    task_id = content.split('"task_id": "')[1].split('"')[0]
    out = await run_tool_call(ToolCall("t6", "BashOutput", {"bash_id": task_id}), ctx)
    assert not out.is_error
    assert "bg-out" in str(out.tool_result["content"])
    assert "completed (exit code 0)" in str(out.tool_result["content"])
