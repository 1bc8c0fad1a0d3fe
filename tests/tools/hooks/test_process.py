"""The hook process runner: process groups, pipes held by grandchildren, caps, cancellation."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from tools.hooks.process import run_process


def live_members(pgid: int) -> list[int]:
    """Independent check: non-zombie processes whose process group is ``pgid``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != b"Z":
            out.append(int(entry))
    return out


async def _run(script: str, tmp_path: Path, timeout_s: float = 5, **kw: object):
    return await run_process(
        ["bash", "-c", script],
        stdin_data=b'{"a": 1}',
        cwd=tmp_path,
        env=dict(os.environ),
        timeout_s=timeout_s,
        **kw,  # type: ignore[arg-type]
    )


async def test_stdout_stderr_exit_code_and_stdin(tmp_path: Path) -> None:
    r = await _run("cat; echo err >&2; exit 3", tmp_path)
    assert (r.exit_code, r.stdout, r.stderr.strip(), r.timed_out) == (3, '{"a": 1}', "err", False)


async def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    r = await _run(f"echo $$ > {pidfile}; sleep 100 & sleep 100 & wait", tmp_path, timeout_s=0.5)
    assert r.timed_out and r.exit_code is None and r.stdout == ""
    pgid = int(pidfile.read_text())
    assert live_members(pgid) == []


async def test_sigterm_ignoring_group_gets_sigkill(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    r = await _run(
        f"trap '' TERM; echo $$ > {pidfile}; sleep 100 & wait", tmp_path, timeout_s=0.3, grace_s=0.2
    )
    assert r.timed_out
    assert live_members(int(pidfile.read_text())) == []


async def test_background_job_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    async with asyncio.timeout(10):  # a hang detector, not a speed assertion
        r = await _run(f"echo $$ > {pidfile}; sleep 100 & echo done", tmp_path, timeout_s=60)
    assert r.exit_code == 0 and r.stdout == "done\n"
    assert live_members(int(pidfile.read_text())) == []


async def test_detached_job_not_holding_pipes_survives(tmp_path: Path) -> None:
    pidfile = tmp_path / "bgpid"
    r = await _run(f"sleep 30 >/dev/null 2>&1 & echo $! > {pidfile}", tmp_path)
    assert r.exit_code == 0
    bg = int(pidfile.read_text())
    try:
        assert bg in live_members(os.getpgid(bg))
    finally:
        os.kill(bg, signal.SIGKILL)


async def test_huge_output_is_capped_and_drained(tmp_path: Path) -> None:
    r = await _run(
        "head -c 5000000 /dev/zero | tr '\\0' a; echo tail >&2", tmp_path, max_bytes=1000
    )
    assert r.exit_code == 0
    assert r.stdout == "a" * 1000 and r.stdout_truncated
    assert r.stderr == "tail\n" and not r.stderr_truncated


async def test_spawn_failure_is_reported_not_raised(tmp_path: Path) -> None:
    r = await run_process(
        [str(tmp_path / "missing-program")],
        stdin_data=b"",
        cwd=tmp_path,
        env={},
        timeout_s=5,
    )
    assert r.exit_code is None and r.spawn_error and "FileNotFoundError" in r.spawn_error


async def test_missing_cwd_is_a_spawn_error(tmp_path: Path) -> None:
    r = await run_process(
        ["bash", "-c", "true"], stdin_data=b"", cwd=tmp_path / "nope", env={}, timeout_s=5
    )
    assert r.spawn_error is not None


async def test_cancellation_kills_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    task = asyncio.create_task(_run(f"echo $$ > {pidfile}; sleep 100 & wait", tmp_path, 60))
    for _ in range(500):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert task.cancelled()
    assert live_members(int(pidfile.read_text())) == []
