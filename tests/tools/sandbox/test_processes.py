"""Issue 22: background tasks, timeouts, sockets, and the ways a command runs outside."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.tools.builtin.test_bash_support import live_marked
from tests.tools.sandbox.support import World, needs_sandbox, run_bash
from tools.process.background import get_manager

pytestmark = needs_sandbox

UNIX = (
    "python3 -c 'import socket; socket.socket(socket.AF_UNIX); print(\"unix-open\")' 2>&1 "
    "| tail -1; python3 -c 'import socket; socket.socketpair(); print(\"pair-ok\")'"
)


async def test_a_timeout_kills_the_whole_sandboxed_tree(world: World) -> None:
    out = await run_bash(
        world, "setsid sleep 9831 & (sleep 9832 &) ; set -m; sleep 9833 & sleep 9834", timeout=800
    )
    assert out.timed_out
    assert live_marked() == []  # the PID namespace took every one of them down


async def test_a_background_task_runs_sandboxed_and_stops_with_its_tree(world: World) -> None:
    out = await run_bash(
        world,
        f"echo no > {world.outside}/bg.txt; echo yes > bg.txt; echo started; "
        "setsid sleep 9835 & sleep 9836",
        run_in_background=True,
    )
    task_id = out.extra["task_id"]
    manager = get_manager(world.ctx())
    task = manager.get(task_id)
    assert task is not None
    for _ in range(500):
        if "started" in Path(task.output_path).read_text():
            break
        await asyncio.sleep(0.01)
    assert (world.project / "bg.txt").read_text() == "yes\n"
    assert not (world.outside / "bg.txt").exists()
    assert "Read-only file system" in Path(task.output_path).read_text()
    await manager.stop(task_id)
    assert live_marked() == []


async def test_unix_sockets_are_closed_and_a_setting_opens_them(world: World) -> None:
    out = await run_bash(world, UNIX)
    assert "Operation not permitted" in out.output and "unix-open" not in out.output
    assert "pair-ok" in out.output  # socketpair stays: programs need it for their own pipes
    world.session(allow_all_unix_sockets=True)
    assert "unix-open" in (await run_bash(world, UNIX)).output


async def test_dangerously_disable_sandbox_runs_outside_when_allowed(world: World) -> None:
    target = world.outside / "unsandboxed.txt"
    out = await run_bash(world, f"echo out > {target}", dangerouslyDisableSandbox=True)
    assert out.exit_code == 0 and target.read_text() == "out\n"


async def test_dangerously_disable_sandbox_is_ignored_when_not_allowed(world: World) -> None:
    world.session(allow_unsandboxed=False)
    target = world.outside / "still-sandboxed.txt"
    out = await run_bash(world, f"echo out > {target}", dangerouslyDisableSandbox=True)
    assert not target.exists()
    assert any("dangerouslyDisableSandbox was ignored" in n for n in out.notices)


async def test_excluded_commands_run_outside(world: World) -> None:
    world.session(excluded_commands=("touch *",))
    target = world.outside / "excluded.txt"
    await run_bash(world, f"touch {target}")
    assert target.exists()
    await run_bash(world, f"echo x > {world.outside}/not-excluded.txt")
    assert not (world.outside / "not-excluded.txt").exists()


async def test_the_shell_cwd_still_persists_inside_the_sandbox(world: World) -> None:
    (world.project / "src").mkdir()
    await run_bash(world, "cd src")
    out = await run_bash(world, "pwd")
    assert out.output.strip() == str(world.project / "src")


async def test_a_disabled_or_unavailable_sandbox_confines_nothing(world: World) -> None:
    from tools.sandbox import SandboxSession
    from tools.sandbox.platform import Bubblewrap

    target = world.outside / "plain.txt"
    world.session(enabled=False)
    await run_bash(world, f"echo x > {target}")
    assert target.exists()
    target.unlink()
    broken = SandboxSession(world.config.__class__(enabled=True), backend=Bubblewrap("/no/bwrap"))
    assert not broken.active and "not installed" in broken.availability.reason
    assert broken.availability.missing == ("bubblewrap",)
    assert not broken.confinement("echo x").sandboxed
