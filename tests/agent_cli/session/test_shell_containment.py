"""``!command`` (the TUI's shell escape) runs like a Bash call: nothing it starts outlives it."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from pathlib import Path

from agent_cli.options import RunOptions
from agent_cli.session.agent_session import AgentSession
from tests.agent_cli.loop.test_agent_loop import env  # noqa: F401  (fixture)
from tools.process.containment import containment
from tools.process.groups import live_group_members


def _sleeps(tag: str) -> list[int]:
    wanted = f"sleep\0{tag}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as fh:
                if fh.read() == wanted:
                    found.append(int(entry))
    return [p for p in found if _live(p)]


def _live(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[:1] != [b"Z"]


async def test_a_shell_command_and_what_it_leaves_behind_end_together(env: Path) -> None:  # noqa: F811
    tag = f"96{secrets.randbelow(10**6):06d}"
    session = AgentSession.create(RunOptions(), cwd=env, interactive=True)
    try:
        out = await session.run_shell(f"setsid sleep {tag} & echo $$")
        pgid = int(out.strip())
        assert live_group_members(pgid) == []
        if containment().available:
            assert _sleeps(tag) == []  # its scope went with it
        await session.close()  # and where no cgroup held it, the exit sweep ends it
        assert _sleeps(tag) == []
        assert session.loop.messages[-1]["content"].startswith(f"<bash-input>setsid sleep {tag}")
    finally:
        for pid in _sleeps(tag):
            os.kill(pid, signal.SIGKILL)
