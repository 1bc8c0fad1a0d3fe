"""Background tasks: start, incremental reads, blocking reads, stop, stop_all, legacy names."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pydantic
import pytest

from tests.tools.builtin.test_bash_support import call, live_marked, make_ctx, no_survivors
from tools.builtin.bash import BASH_TOOL
from tools.builtin.tasks import (
    TASK_OUTPUT_TOOL,
    TASK_STOP_TOOL,
    TOOLS,
    TaskOutputInput,
    TaskStopInput,
)
from tools.context import ToolUseContext
from tools.process.background import BackgroundTaskManager, get_manager
from tools.process.runner import live_group_members

__all__ = ["no_survivors"]


async def start(ctx: ToolUseContext, command: str) -> str:
    res = await call(BASH_TOOL, ctx, command=command, run_in_background=True)
    assert not res.is_error
    text = BASH_TOOL.to_content(res.data)
    assert isinstance(text, str)
    info = json.loads(text.splitlines()[1])
    assert set(info) == {"task_id", "output_file"}
    return str(info["task_id"])


async def output(ctx: ToolUseContext, **raw: object) -> str:
    res = await call(TASK_OUTPUT_TOOL, ctx, **raw)
    assert not res.is_error
    return str(res.data)


def body(text: str) -> str:
    if "<output/>" in text:
        return ""
    return text.split("<output>\n", 1)[1].split("\n</output>", 1)[0] + "\n"


async def test_tools_and_aliases() -> None:
    assert TOOLS == (TASK_OUTPUT_TOOL, TASK_STOP_TOOL)
    assert TASK_OUTPUT_TOOL.aliases == ("BashOutput",)
    assert TASK_STOP_TOOL.aliases == ("KillShell",)
    assert TASK_OUTPUT_TOOL.is_read_only(TaskOutputInput(task_id="x"))
    assert TASK_OUTPUT_TOOL.is_concurrency_safe(TaskOutputInput(task_id="x"))
    assert not TASK_STOP_TOOL.is_read_only(TaskStopInput(task_id="x"))
    assert TaskOutputInput.model_validate({"bash_id": "b1"}).task_id == "b1"
    assert TaskStopInput.model_validate({"shell_id": "b2"}).task_id == "b2"
    with pytest.raises(pydantic.ValidationError):
        TaskOutputInput.model_validate({"task_id": "x", "timeout": 600_001})
    with pytest.raises(pydantic.ValidationError):
        TaskStopInput.model_validate({})
    schema = TASK_OUTPUT_TOOL.input_schema()
    assert schema["required"] == ["task_id"] and "bash_id" not in schema["properties"]
    assert TaskOutputInput(task_id="x").block is True
    assert TaskOutputInput(task_id="x").timeout == 30_000


async def test_lifecycle_incremental_then_blocking(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    task_id = await start(
        ctx, "echo first; for i in 1 2 3 4 5; do sleep 0.1; echo tick$i; done; echo last"
    )
    manager = get_manager(ctx)
    snap = manager.list()[0]
    assert snap.task_id == task_id and snap.status == "running"
    out_path = Path(snap.output_path)
    assert out_path == ctx.options.session_dir / "tasks" / f"{task_id}.log"  # type: ignore[operator]

    for _ in range(200):
        if out_path.stat().st_size:
            break
        await asyncio.sleep(0.01)
    first = await output(ctx, task_id=task_id, block=False)
    assert "<status>running</status>" in first
    assert body(first).startswith("first\n")
    done = await output(ctx, task_id=task_id, block=True, timeout=10_000)
    assert "<status>completed (exit code 0)</status>" in done
    assert (
        body(first) + body(done)
        == "first\n" + "".join(f"tick{i}\n" for i in range(1, 6)) + "last\n"
    )
    again = await output(ctx, task_id=task_id, block=False)
    assert "<output/>" in again  # nothing new since the last read
    rec = manager.records()[0]
    assert rec["status"] == "completed" and rec["exit_code"] == 0 and rec["ended_at"] is not None


async def test_failed_task_reports_exit_code(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    task_id = await start(ctx, "echo oops; exit 4")
    text = await output(ctx, task_id=task_id)
    assert "<status>failed (exit code 4)</status>" in text and "oops" in text


async def test_blocking_read_times_out_with_task_still_running(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    task_id = await start(ctx, "echo up; sleep 9821")
    text = await output(ctx, task_id=task_id, timeout=300)
    assert "<status>running</status>" in text and "still running" in text
    await get_manager(ctx).stop_all()


async def test_blocking_read_returns_on_abort(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    task_id = await start(ctx, "sleep 9822")
    asyncio.get_running_loop().call_later(0.2, ctx.abort.abort)
    text = await output(ctx, task_id=task_id, timeout=60_000)
    assert "<status>running</status>" in text
    await get_manager(ctx).stop_all()


async def test_stop_kills_the_whole_group(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    task_id = await start(ctx, "echo $$; sleep 9823 & sleep 9824 & trap '' TERM; wait")
    manager = get_manager(ctx)
    task = manager.get(task_id)
    assert task is not None
    res = await call(TASK_STOP_TOOL, ctx, task_id=task_id)
    assert not res.is_error and "killed" in str(res.data)
    assert live_group_members(task.pgid) == []
    assert manager.list()[0].status == "killed"
    res = await call(TASK_STOP_TOOL, ctx, shell_id=task_id)
    assert "already ended" in str(res.data)


async def test_task_leaving_children_behind_leaves_no_orphans(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    task_id = await start(ctx, "sleep 9825 & echo parent-done")
    text = await output(ctx, task_id=task_id, timeout=10_000)
    assert "completed" in text and "parent-done" in text
    assert live_marked() == []


async def test_stop_all_at_session_end(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ids = [await start(ctx, f"sleep 98{n} & sleep 98{n + 1}; wait") for n in (30, 32, 34)]
    finished = await start(ctx, "echo quick")
    manager = get_manager(ctx)
    await manager.wait(finished, 10)
    # three bash shells and six sleeps; on a loaded machine the last sleeps may still be forking
    for _ in range(250):
        if len(live_marked()) == 9:
            break
        await asyncio.sleep(0.02)
    assert len(live_marked()) == 9
    await manager.stop_all()
    assert live_marked() == []
    statuses = {s.task_id: s.status for s in manager.list()}
    assert [statuses[i] for i in ids] == ["killed"] * 3 and statuses[finished] == "completed"


async def test_unknown_task_is_an_error(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(TASK_OUTPUT_TOOL, ctx, bash_id="nope")
    assert res.is_error and "No background task" in str(res.data)
    res = await call(TASK_STOP_TOOL, ctx, task_id="nope")
    assert res.is_error


async def test_large_backlog_returns_the_newest_part(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    task_id = await start(ctx, "seq 1 100000")
    text = await output(ctx, task_id=task_id)
    assert "earlier bytes not shown" in text
    assert len(text) < 31_000 and body(text).endswith("99999\n100000\n")


async def test_manager_without_session_dir_uses_temp(tmp_path: Path) -> None:
    manager = BackgroundTaskManager(None)
    snap = await manager.start("echo hi", cwd=tmp_path)
    await manager.wait(snap.task_id, 10)
    text, skipped = manager.read_new(snap.task_id)
    assert text == "hi\n" and skipped == 0
    Path(snap.output_path).unlink()


async def test_kill_all_now_is_synchronous(tmp_path: Path) -> None:
    manager = BackgroundTaskManager(tmp_path)
    snap = await manager.start("sleep 9836", cwd=tmp_path)
    manager.kill_all_now()
    assert await manager.wait(snap.task_id, 10)
    assert manager.list()[0].status == "killed" and manager.list()[0].signal == "SIGKILL"
