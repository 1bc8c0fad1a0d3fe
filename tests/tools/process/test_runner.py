"""Process-group lifecycle with real processes: timeout, TERM-proof commands, abort, cancel,
the linger for background jobs, large and binary output, images."""

from __future__ import annotations

import asyncio
import base64
import io
import os
from pathlib import Path

from PIL import Image

from tests.tools.builtin.test_bash_support import call, live_marked, make_ctx, no_survivors
from tools.builtin.bash import BASH_TOOL
from tools.process.runner import bash_path, live_group_members, run_in_group

__all__ = ["no_survivors"]


async def _run(command: str, timeout_s: float | None = 10.0, **kw: object) -> tuple[bytes, object]:
    chunks: list[bytes] = []
    outcome = await run_in_group(
        [bash_path(), "-c", command],
        cwd=Path("/"),
        on_data=chunks.append,
        timeout_s=timeout_s,
        **kw,  # type: ignore[arg-type]
    )
    return b"".join(chunks), outcome


async def test_timeout_kills_the_whole_group() -> None:
    out, outcome = await _run("echo $$; sleep 9801 & sleep 9802 & wait", timeout_s=1.0)
    pgid = int(out.split()[0])
    assert outcome.timed_out and not outcome.interrupted  # type: ignore[attr-defined]
    assert outcome.signal == "SIGTERM"  # type: ignore[attr-defined]
    assert live_group_members(pgid) == []
    assert live_marked() == []


async def test_term_ignoring_command_is_killed_after_grace() -> None:
    out, outcome = await _run("echo $$; trap '' TERM; sleep 9803", timeout_s=0.5)
    pgid = int(out.split()[0])
    assert outcome.timed_out  # type: ignore[attr-defined]
    assert outcome.signal == "SIGKILL"  # type: ignore[attr-defined]
    assert live_group_members(pgid) == []


async def test_nested_background_tree_is_killed() -> None:
    out, outcome = await _run(
        "echo $$; bash -c 'sleep 9804 & sleep 9805; wait' & wait", timeout_s=0.5
    )
    assert outcome.timed_out  # type: ignore[attr-defined]
    assert live_group_members(int(out.split()[0])) == []


async def test_background_job_holding_the_pipe_does_not_block() -> None:
    out, outcome = await _run("echo $$; sleep 9806 & echo done", timeout_s=30.0)
    assert not outcome.timed_out  # type: ignore[attr-defined]
    assert outcome.exit_code == 0  # type: ignore[attr-defined]
    assert out.split()[1] == b"done"
    assert live_group_members(int(out.split()[0])) == []


async def test_tool_timeout_result(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(
        BASH_TOOL, ctx, command="echo started; sleep 9807 & sleep 9808 & wait", timeout=1000
    )
    assert res.is_error
    assert res.data.timed_out and res.data.exit_code is None
    text = BASH_TOOL.to_content(res.data)
    assert text == "started\n[Command timed out after 1s and was killed]"


async def test_abort_mid_run_kills_the_group(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    loop = asyncio.get_running_loop()
    loop.call_later(0.4, ctx.abort.abort)
    res = await call(BASH_TOOL, ctx, command="echo $$; sleep 9809 & sleep 9810")
    assert res.is_error
    assert res.data.interrupted and not res.data.timed_out
    pgid = int(res.data.output.split()[0])
    assert live_group_members(pgid) == []
    assert "[Command was interrupted and killed]" in BASH_TOOL.to_content(res.data)


async def test_already_aborted_signal_runs_nothing_long(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ctx.abort.abort()
    res = await call(BASH_TOOL, ctx, command="echo x; sleep 9811")
    assert res.data.interrupted


async def test_cancellation_kills_the_group(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    progress: list[object] = []
    task = asyncio.ensure_future(call(BASH_TOOL, ctx, progress, command="echo go; sleep 9812"))
    for _ in range(200):
        if progress:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:  # pragma: no cover
        raise AssertionError("the call should have been cancelled")
    assert live_marked() == []


async def test_huge_output_is_spooled_and_bounded(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="seq 1 2000000")
    assert not res.is_error and res.data.truncated
    text = BASH_TOOL.to_content(res.data)
    assert isinstance(text, str) and len(text) < 30_000
    assert text.startswith("1\n2\n3\n")
    assert "lines truncated] ..." in text and "\n2000000\n[Output too large" in text
    spool = Path(res.data.output_file)
    assert spool.is_relative_to(ctx.options.session_dir / "bash-output")  # type: ignore[operator]
    assert str(spool) in text
    assert res.data.total_lines == 2_000_000
    assert spool.stat().st_size == res.data.total_bytes
    with spool.open("rb") as fh:
        fh.seek(-8, 2)
        assert fh.read() == b"2000000\n"


async def test_failed_command_shows_head_and_tail(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="seq 1 100000; echo FATAL: broke; exit 2")
    assert res.is_error and res.data.truncated
    text = BASH_TOOL.to_content(res.data)
    assert isinstance(text, str) and len(text) < 11_000
    head, _, rest = text.partition("... [")
    assert head.startswith("1\n2\n") and "FATAL: broke\n[Exit code 2]" in rest
    omitted = int(rest.split(" lines truncated")[0])
    shown = head.count("\n") + rest.split("] ...\n", 1)[1].split("[Exit code")[0].count("\n")
    assert omitted + shown == 100_001


async def test_medium_output_is_returned_whole(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="seq 1 5000")  # 23,893 chars
    assert not res.data.truncated and res.data.output_file is None
    assert BASH_TOOL.to_content(res.data) == "\n".join(str(i) for i in range(1, 5001))


async def test_random_binary_output_does_not_crash(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    res = await call(BASH_TOOL, ctx, command="head -c 300000 /dev/urandom")
    assert not res.is_error
    assert isinstance(BASH_TOOL.to_content(res.data), (str, list))


async def test_image_output_becomes_an_image_block(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 10, 10)).save(buf, format="PNG")
    (ctx.cwd / "shot.png").write_bytes(buf.getvalue())
    res = await call(BASH_TOOL, ctx, command="cat shot.png")
    content = BASH_TOOL.to_content(res.data)
    assert isinstance(content, list) and content[0]["type"] == "image"
    source = content[0]["source"]
    assert source["type"] == "base64" and source["media_type"] == "image/png"
    assert base64.b64decode(source["data"]) == buf.getvalue()
    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, format="GIF")
    (ctx.cwd / "a.gif").write_bytes(buf.getvalue())
    res = await call(BASH_TOOL, ctx, command="cat a.gif")
    assert BASH_TOOL.to_content(res.data)[0]["source"]["media_type"] == "image/gif"


async def test_spooled_image_is_read_back_whole(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    noise = Image.frombytes("RGB", (500, 500), os.urandom(500 * 500 * 3))
    buf = io.BytesIO()
    noise.save(buf, format="PNG")
    assert len(buf.getvalue()) > 512 * 1024  # bigger than what stays in memory: spooled
    (ctx.cwd / "noise.png").write_bytes(buf.getvalue())
    res = await call(BASH_TOOL, ctx, command="cat noise.png")
    content = BASH_TOOL.to_content(res.data)
    assert isinstance(content, list) and content[0]["type"] == "image"
    assert base64.b64decode(content[0]["source"]["data"]) == buf.getvalue()


async def test_oversized_image_is_described_not_sent(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    big = ctx.cwd / "big.png"
    big.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * (6 * 1024 * 1024))
    res = await call(BASH_TOOL, ctx, command="cat big.png")
    content = BASH_TOOL.to_content(res.data)
    assert isinstance(content, str)
    assert "image/png image of 6MB: too large to show" in content
