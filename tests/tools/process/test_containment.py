"""Item 8 of issue 18: what escapes a process group is still contained and reaped.

Commands that leave their process group (``setsid``, ``set -m``, ``timeout N cmd &``,
``setpgid``) are killed with the command where cgroup v2 is writable (a transient scope per
command), at session close otherwise (the owner-marker sweep), and by the next start after a
crash (the reaper reads the dead owner's lease: its scope, or its marker).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import tools.process.containment as containment_mod
from tests.tools.builtin.test_bash_support import live_marked, no_survivors  # noqa: F401
from tools.hooks.process import run_process
from tools.process.containment import Containment, containment, new_scope
from tools.process.reaper import close_scopes, reap_orphans, sweep_own_marked
from tools.process.runner import bash_path, run_in_group

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="containment needs /proc")

REPO = Path(__file__).resolve().parents[3]
HAVE_CGROUPS = containment().available
needs_cgroups = pytest.mark.skipif(
    not HAVE_CGROUPS, reason=f"cgroup v2 is not writable here: {containment().reason}"
)

ESCAPES = [
    pytest.param("setsid sleep 9811 &", id="setsid"),
    pytest.param("set -m; sleep 9812 &", id="set-m"),
    pytest.param("timeout 60 sleep 9813 &", id="timeout-bg"),
    pytest.param(
        f'{sys.executable} -c \'import os; os.setpgid(0, 0); os.execvp("sleep", ["sleep", '
        '"9814"])\' &',
        id="setpgid",
    ),
]


def _escaped() -> list[int]:
    return [pid for pid, _ in live_marked()]


async def _escaped_soon(count: int, within_s: float = 5.0) -> list[int]:
    """The marked escapees once there are ``count`` of them (or whatever is there at the end)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while len(found := _escaped()) < count and loop.time() < deadline:
        await asyncio.sleep(0.02)
    return found


async def _run(command: str, cwd: Path) -> None:
    out: list[bytes] = []
    outcome = await run_in_group(
        [bash_path(), "-c", command + "\nsleep 0.2"], cwd=cwd, on_data=out.append, timeout_s=10
    )
    assert outcome.exit_code == 0, b"".join(out)


@pytest.fixture
def fallback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Pretend cgroups are not writable: process groups and markers only."""
    monkeypatch.setattr(containment_mod, "_STATE", Containment(None, "test: no cgroups"))
    yield


@needs_cgroups
@pytest.mark.parametrize("command", ESCAPES)
async def test_an_escape_from_the_group_ends_with_the_command(command: str, tmp_path: Path) -> None:
    await _run(command, tmp_path)
    assert _escaped() == []  # the autouse no_survivors fixture checks it again


async def test_without_cgroups_an_escapee_lives_until_the_exit_sweep(
    fallback: None, tmp_path: Path
) -> None:
    assert new_scope("bash") is None
    await _run("setsid sleep 9815 &", tmp_path)
    [pid] = await _escaped_soon(1)  # the documented fallback: it left the group, nothing held it
    assert pid in sweep_own_marked(grace_s=0.2)
    assert _escaped() == []


@needs_cgroups
async def test_a_hooks_detached_job_runs_until_session_close(tmp_path: Path) -> None:
    result = await run_process(
        ["bash", "-c", "setsid sleep 9816 >/dev/null 2>&1 < /dev/null & echo started"],
        stdin_data=b"{}",
        cwd=tmp_path,
        env=dict(os.environ),
        timeout_s=10,
    )
    assert result.exit_code == 0 and result.stdout.strip() == "started"
    # the hook's shell exits right after forking: the job may not have exec'd ``sleep`` yet
    assert len(await _escaped_soon(1)) == 1  # a hook may leave a job behind ...
    await close_scopes()  # ... but not past the end of the session
    assert _escaped() == []


async def test_a_timed_out_hook_takes_its_escapees_along(tmp_path: Path) -> None:
    result = await run_process(
        ["bash", "-c", "setsid sleep 9817 & sleep 30"],
        stdin_data=b"{}",
        cwd=tmp_path,
        env=dict(os.environ),
        timeout_s=0.3,
        grace_s=0.1,
    )
    assert result.timed_out
    if not HAVE_CGROUPS:
        sweep_own_marked(grace_s=0.1)
    assert _escaped() == []


async def test_an_exec_form_hook_that_does_not_exist_is_still_a_spawn_error(
    tmp_path: Path,
) -> None:
    result = await run_process(
        ["/no/such/hook"], stdin_data=b"", cwd=tmp_path, env=dict(os.environ), timeout_s=5
    )
    assert result.spawn_error is not None and "FileNotFoundError" in result.spawn_error


@needs_cgroups
async def test_a_scope_is_removed_when_its_command_ends(tmp_path: Path) -> None:
    root = containment().root
    assert root is not None
    before = {p.name for p in root.iterdir() if p.is_dir()}
    await _run("true", tmp_path)
    assert {p.name for p in root.iterdir() if p.is_dir()} == before


# -- after a crash -------------------------------------------------------------------------

CRASHING_OWNER = """
import asyncio, sys
from pathlib import Path
import tools.process.containment as c
from tools.process.runner import bash_path, run_in_group
if sys.argv[2] == "fallback":
    c._STATE = c.Containment(None, "test")
async def main():
    await run_in_group([bash_path(), "-c", sys.argv[1]], cwd=Path.cwd(),
                       on_data=lambda b: print(b.decode(), end="", flush=True), timeout_s=600)
asyncio.run(main())
"""


def _owner(tmp_path: Path, command: str, mode: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NERVE_OWNER")}
    env["NERVE_DATA_DIR"] = str(tmp_path)
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHING_OWNER, command, mode],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.parametrize("mode", ["cgroup", "fallback"])
def test_a_crashed_owners_escapees_are_reaped_at_the_next_start(mode: str, tmp_path: Path) -> None:
    if mode == "cgroup" and not HAVE_CGROUPS:
        pytest.skip(f"cgroup v2 is not writable here: {containment().reason}")
    proc = _owner(tmp_path, "setsid sleep 9818 & sleep 9819 & echo ready; wait", mode)
    try:
        proc.kill()  # SIGKILL: nothing in the owner runs
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5  # "ready" may come before both sleeps have exec'd
        while len(_escaped()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(_escaped()) >= 2  # the shell and its sleeps
        signalled = reap_orphans(directory=tmp_path / "owners", grace_s=0.2)
        assert _escaped() == [], signalled
        assert list((tmp_path / "owners").iterdir()) == []  # the lease is gone too
    finally:
        for pid in _escaped():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


RG_OWNER = """
import asyncio, sys
from pathlib import Path
from tools.builtin._rg import run_rg
from tools.context import AbortSignal
print("ready", flush=True)
asyncio.run(run_rg(["-e", "x", sys.argv[1]], Path.cwd(), AbortSignal()))
"""


def test_rg_of_a_crashed_owner_is_reaped(tmp_path: Path) -> None:
    from tools.builtin._rg import find_rg

    if find_rg() is None:
        pytest.skip("ripgrep is not installed")
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)  # rg blocks reading it: a stand-in for a long search
    env = {k: v for k, v in os.environ.items() if not k.startswith("NERVE_OWNER")}
    env.update(NERVE_DATA_DIR=str(tmp_path), PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-c", RG_OWNER, str(fifo)], cwd=tmp_path, env=env, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"

    def rg_pids() -> list[int]:
        return [
            int(e)
            for e in os.listdir("/proc")
            if e.isdigit()
            and b"--no-config" in (line := _cmdline(int(e)))
            and line.endswith(str(fifo).encode() + b"\0")
        ]

    def noted() -> bool:  # the group is in the lease (a kill before that loses it: documented)
        leases = list((tmp_path / "owners").glob("*"))
        return bool(rg_pids()) and any(str(rg_pids()[0]) in p.read_text() for p in leases)

    try:
        _wait(noted)
        proc.kill()
        proc.wait(timeout=10)
        assert rg_pids()  # a SIGKILLed owner leaves its rg behind ...
        reap_orphans(directory=tmp_path / "owners", grace_s=0.2)
        _wait(lambda: not rg_pids())  # ... until the next start
    finally:
        for pid in rg_pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _wait(predicate: object, timeout: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_containment_says_what_it_uses() -> None:
    state = containment()
    text = state.describe()
    if state.available:
        assert "cgroup v2" in text
    else:
        assert "process groups only" in text and state.reason in text
    assert "process groups only (x)" in Containment(None, "x").describe()


async def test_session_close_runs_the_sweep(fallback: None, tmp_path: Path) -> None:
    await _run("setsid sleep 9820 &", tmp_path)
    assert len(await _escaped_soon(1)) == 1
    await close_scopes()
    assert _escaped() == []
    await asyncio.sleep(0)
