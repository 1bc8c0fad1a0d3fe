"""The shared live-member scan of a process group, against real processes."""

from __future__ import annotations

import os
import signal
import subprocess

from tools.process.groups import group_has_live_members, live_group_members


def test_a_live_group_is_seen_and_a_killed_one_is_not() -> None:
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert live_group_members(proc.pid) == [proc.pid]
        assert group_has_live_members(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert live_group_members(proc.pid) == []
        assert not group_has_live_members(proc.pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_zombie_is_not_a_live_member() -> None:
    proc = subprocess.Popen(["true"], start_new_session=True)
    try:
        # Not reaped yet: wait until it is a zombie, then it must not count.
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        assert live_group_members(proc.pid) == []
        assert not group_has_live_members(proc.pid)
    finally:
        proc.wait()
