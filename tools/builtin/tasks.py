"""TaskOutput (legacy BashOutput) and TaskStop (legacy KillShell): background task control.

Both work on the session's :class:`~tools.process.background.BackgroundTaskManager`.
TaskOutput returns the output written since the previous read plus the task's status; with
``block`` (the default) it first waits until the task ends, the timeout passes or the turn is
aborted. TaskStop ends the task's whole process group.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.base import ProgressFn, Tool, build_tool
from tools.context import ToolUseContext
from tools.process.background import TaskSnapshot, get_manager
from tools.result import ToolResult

__all__ = ["TASK_OUTPUT_TOOL", "TASK_STOP_TOOL", "TOOLS", "TaskOutputInput", "TaskStopInput"]

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000


def _rename_legacy(data: Any, legacy: str) -> Any:
    # Old transcripts and models trained on older versions send the legacy id field.
    if isinstance(data, dict) and "task_id" not in data and legacy in data:
        data = {("task_id" if k == legacy else k): v for k, v in data.items()}
    return data


class TaskOutputInput(BaseModel):
    """Input of TaskOutput."""

    model_config = ConfigDict(extra="ignore")

    task_id: str = Field(description="The id of the background task to read")
    block: bool = Field(default=True, description="Wait for the task to finish first")
    timeout: int = Field(
        default=DEFAULT_WAIT_MS,
        ge=0,
        le=MAX_WAIT_MS,
        description=f"How long to wait in milliseconds when block is true (max {MAX_WAIT_MS})",
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        return _rename_legacy(data, "bash_id")


class TaskStopInput(BaseModel):
    """Input of TaskStop."""

    model_config = ConfigDict(extra="ignore")

    task_id: str = Field(description="The id of the background task to stop")

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        return _rename_legacy(data, "shell_id")


def _status_line(snap: TaskSnapshot) -> str:
    if snap.status == "running":
        return "running"
    if snap.signal is not None:
        return f"{snap.status} (signal {snap.signal})"
    return f"{snap.status} (exit code {snap.exit_code})"


def _unknown(task_id: str, known: list[str]) -> ToolResult:
    listed = ", ".join(known) if known else "none"
    msg = f"No background task with id {task_id!r}. Known tasks: {listed}."
    return ToolResult(data=msg, is_error=True)


async def _wait_or_abort(ctx: ToolUseContext, waiter: Any, timeout_s: float) -> None:
    done = asyncio.ensure_future(waiter)
    aborted = asyncio.ensure_future(ctx.abort.wait())
    try:
        await asyncio.wait({done, aborted}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for fut in (done, aborted):
            if not fut.done():
                fut.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await fut


async def _task_output(
    inp: TaskOutputInput, ctx: ToolUseContext, _progress: ProgressFn
) -> ToolResult:
    manager = get_manager(ctx)
    task = manager.get(inp.task_id)
    if task is None:
        return _unknown(inp.task_id, manager.ids())
    if inp.block and task.status == "running" and not ctx.abort.aborted:
        await _wait_or_abort(ctx, task.done.wait(), inp.timeout / 1000)
    text, skipped = manager.read_new(inp.task_id)
    snap = task.snapshot()
    parts = [f"<task_id>{snap.task_id}</task_id>", f"<status>{_status_line(snap)}</status>"]
    if skipped:
        parts.append(
            f"<note>{skipped} earlier bytes not shown; the full log is {snap.output_path}</note>"
        )
    parts.append(f"<output>\n{text.rstrip(chr(10))}\n</output>" if text else "<output/>")
    parts += [f"<sandbox>{note}</sandbox>" for note in task.notes]  # e.g. a refused domain
    if snap.status == "running" and inp.block and not ctx.abort.aborted:
        parts.append(f"<note>still running after waiting {inp.timeout / 1000:g}s</note>")
    return ToolResult(data="\n".join(parts))


async def _task_stop(inp: TaskStopInput, ctx: ToolUseContext, _progress: ProgressFn) -> ToolResult:
    manager = get_manager(ctx)
    task = manager.get(inp.task_id)
    if task is None:
        return _unknown(inp.task_id, manager.ids())
    if task.status != "running":
        snap = task.snapshot()
        return ToolResult(data=f"Task {inp.task_id} already ended: {_status_line(snap)}")
    snap = await manager.stop(inp.task_id)
    return ToolResult(data=f"Stopped task {inp.task_id} ({snap.command}): {_status_line(snap)}")


TASK_OUTPUT_TOOL: Tool[TaskOutputInput] = build_tool(
    name="TaskOutput",
    aliases=("BashOutput",),
    input_model=TaskOutputInput,
    call=_task_output,
    description=(
        "Reads the output of a background task (started with Bash run_in_background) written "
        "since the last read, and its status. With block=true (default) waits until the task "
        "ends or the timeout (ms) passes."
    ),
    search_hint="read background task output",
    is_read_only=True,
    is_concurrency_safe=True,
    max_result_size_chars=50_000,
    render_call=lambda inp: inp.task_id,
)

TASK_STOP_TOOL: Tool[TaskStopInput] = build_tool(
    name="TaskStop",
    aliases=("KillShell",),
    input_model=TaskStopInput,
    call=_task_stop,
    description="Stops a running background task and every process it started.",
    search_hint="stop kill background task",
    render_call=lambda inp: inp.task_id,
)

TOOLS: tuple[Tool, ...] = (TASK_OUTPUT_TOOL, TASK_STOP_TOOL)
