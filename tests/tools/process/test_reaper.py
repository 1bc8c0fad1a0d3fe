"""The reaper with real processes: a mini-owner spawns groups the way Nerve does, is SIGKILLed,
and ``reap_orphans`` must end exactly what is provably its own and nothing else."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tools.process.owners import (
    OWNER_PID_ENV,
    OWNER_START_ENV,
    Owner,
    note_group,
    owner_env,
    read_stat,
    self_owner,
)
from tools.process.reaper import reap_orphans, start_reaper
from tools.process.runner import bash_path, run_in_group

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="the reaper needs /proc")

REPO = Path(__file__).resolve().parents[3]
SCRUB = f"/usr/bin/env -u {OWNER_PID_ENV} -u {OWNER_START_ENV}"

# A stand-in for Nerve: spawns ``bash -c <argv[1]>`` in a new session with the owner markers and
# records the group in its lease (the same calls the Bash tool makes), then waits to be killed.
MINI_OWNER = """
import subprocess, sys, time
from tools.process.owners import note_group, owner_env
proc = subprocess.Popen(["bash", "-c", sys.argv[1]], env=owner_env(), start_new_session=True)
note_group(proc.pid)
print(proc.pid, flush=True)
time.sleep(600)
"""


def _tag() -> str:
    """A sleep duration no other test run uses, so a /proc scan finds only ours."""
    return f"97{secrets.randbelow(10)}.{secrets.randbelow(10**6):06d}"


def live_sleeps(*tags: str) -> dict[str, list[int]]:
    """Live (non-zombie) ``sleep <tag>`` processes, by tag."""
    wanted = {f"sleep\0{t}\0".encode(): t for t in tags}
    found: dict[str, list[int]] = {t: [] for t in tags}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        for marker, tag in wanted.items():
            if cmdline.endswith(marker):
                info = read_stat(int(entry))
                if info is not None and info.live:
                    found[tag].append(int(entry))
    return found


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def all_alive(*tags: str) -> bool:
    return all(live_sleeps(*tags).values())


def none_alive(*tags: str) -> bool:
    return not any(live_sleeps(*tags).values())


@pytest.fixture
def owners(tmp_path: Path) -> Path:
    return tmp_path / "owners"


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    """Tags whose sleeps are SIGKILLed after the test, whatever happened."""
    tags: list[str] = []
    yield tags
    for pids in live_sleeps(*tags).values():
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


class MiniOwner:
    def __init__(self, owners: Path, script: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NERVE_")}
        env["NERVE_DATA_DIR"] = str(owners.parent)
        env["PYTHONPATH"] = str(REPO)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", MINI_OWNER, script],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.pgid = int(self.proc.stdout.readline())

    def kill(self, *, reap: bool = True) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        if reap:
            self.proc.wait(timeout=10)

    def close(self) -> None:
        self.kill()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        with contextlib.suppress(OSError):
            os.killpg(self.pgid, signal.SIGKILL)


@pytest.fixture
def spawn(owners: Path) -> Iterator[Callable[[str], MiniOwner]]:
    started: list[MiniOwner] = []

    def make(script: str) -> MiniOwner:
        started.append(MiniOwner(owners, script))
        return started[-1]

    yield make
    for owner in started:
        owner.close()


def fake_lease(owners: Path, pid: int, start: int, pgids: list[int]) -> Path:
    """A lease as a Nerve with identity (pid, start) would have written it."""
    me = self_owner()
    assert me is not None
    owners.mkdir(parents=True, exist_ok=True)
    path = owners / Owner(me.boot, me.pidns, pid, start).lease_name
    path.write_text("".join(f"{pg}\n" for pg in pgids))
    return path


def marked_sleep(tag: str, owner_pid: int, owner_start: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, OWNER_PID_ENV: str(owner_pid), OWNER_START_ENV: str(owner_start)}
    proc = subprocess.Popen(["sleep", tag], env=env, start_new_session=True)
    # Until the child has exec'd, /proc shows the parent's environment (no markers yet).
    wait_for(lambda: all_alive(tag))
    return proc


def dead_pid() -> tuple[int, int]:
    """The pid and start time of a process that has exited and been reaped."""
    proc = subprocess.Popen(["sleep", "0"])
    info = read_stat(proc.pid)
    proc.wait()
    return proc.pid, info.start if info is not None else 1


# -- the dead owner ------------------------------------------------------------------------


def test_a_killed_owners_foreground_and_background_sleeps_are_reaped(
    owners: Path, spawn: Callable[[str], MiniOwner], cleanup: list[str]
) -> None:
    a, b = _tag(), _tag()
    cleanup += [a, b]
    owner = spawn(f"sleep {a} & sleep {b}")
    wait_for(lambda: all_alive(a, b))
    owner.kill(reap=False)  # left a zombie: a zombie owner is a dead owner
    time.sleep(0.1)
    assert all_alive(a, b), "SIGKILL of the owner leaves its group running"
    [lease] = list(owners.iterdir())

    assert reap_orphans(directory=owners) == [owner.pgid]
    assert none_alive(a, b)
    assert not lease.exists()  # nothing of it is left: the lease is forgotten
    owner.kill()
    assert reap_orphans(directory=owners) == []


def test_a_scrubbed_child_of_a_marked_process_goes_with_its_group(
    owners: Path, spawn: Callable[[str], MiniOwner], cleanup: list[str]
) -> None:
    a, b = _tag(), _tag()
    cleanup += [a, b]
    owner = spawn(f"{SCRUB} sleep {a} & sleep {b}; wait")
    wait_for(lambda: all_alive(a, b))
    owner.kill()
    assert reap_orphans(directory=owners) == [owner.pgid]
    assert none_alive(a, b)


def test_a_term_ignoring_orphan_is_killed_after_the_grace(
    owners: Path, spawn: Callable[[str], MiniOwner], cleanup: list[str]
) -> None:
    a = _tag()
    cleanup.append(a)
    owner = spawn(f"trap '' TERM; {bash_path()} -c 'trap \"\" TERM; sleep {a}'; :")
    wait_for(lambda: all_alive(a))
    owner.kill()
    assert reap_orphans(directory=owners, grace_s=0.2) == [owner.pgid]
    wait_for(lambda: none_alive(a), timeout=2)


def test_the_reaper_thread_does_the_same(
    owners: Path, spawn: Callable[[str], MiniOwner], cleanup: list[str]
) -> None:
    a = _tag()
    cleanup.append(a)
    owner = spawn(f"sleep {a}")
    wait_for(lambda: all_alive(a))
    owner.kill()
    thread = start_reaper(owners)
    assert thread is not None and thread.daemon
    thread.join(10)
    assert none_alive(a)


def test_a_marker_naming_a_reused_pid_is_reaped(owners: Path, cleanup: list[str]) -> None:
    a, stand_in = _tag(), _tag()
    cleanup += [a, stand_in]
    # A live process holds the owner's pid now, but it started at another time.
    other = subprocess.Popen(["sleep", stand_in])
    orphan: subprocess.Popen[bytes] | None = None
    try:
        info = read_stat(other.pid)
        assert info is not None
        orphan = marked_sleep(a, other.pid, info.start - 1)
        fake_lease(owners, other.pid, info.start - 1, [orphan.pid])
        assert reap_orphans(directory=owners) == [orphan.pid]
        assert orphan.wait(timeout=5) == -signal.SIGTERM
        assert all_alive(stand_in)  # the process that reused the pid is untouched
    finally:
        other.kill()
        other.wait()
        if orphan is not None:
            orphan.kill()
            orphan.wait()


# -- what is never touched -------------------------------------------------------------------


def test_a_live_owners_groups_are_left_alone(
    owners: Path, spawn: Callable[[str], MiniOwner], cleanup: list[str]
) -> None:
    a = _tag()
    cleanup.append(a)
    owner = spawn(f"sleep {a}")
    wait_for(lambda: all_alive(a))
    [lease] = list(owners.iterdir())
    assert reap_orphans(directory=owners) == []
    assert all_alive(a) and lease.exists()
    owner.kill()  # now it is dead: the same call ends the group
    assert reap_orphans(directory=owners) == [owner.pgid]
    assert none_alive(a)


def test_a_process_without_markers_is_never_touched(owners: Path, cleanup: list[str]) -> None:
    a = _tag()
    cleanup.append(a)
    plain = subprocess.Popen(["sleep", a], start_new_session=True)
    try:
        pid, start = dead_pid()
        lease = fake_lease(owners, pid, start, [plain.pid])  # listed, but not marked
        assert reap_orphans(directory=owners) == []
        assert plain.poll() is None
        assert not lease.exists()  # the listed pgid is not ours: nothing left to watch
    finally:
        plain.kill()
        plain.wait()


def test_a_stray_marker_without_a_lease_is_never_touched(owners: Path, cleanup: list[str]) -> None:
    a = _tag()
    cleanup.append(a)
    pid, start = dead_pid()
    stray = marked_sleep(a, pid, start)  # names a dead owner, but no lease lists its group
    try:
        owners.mkdir()
        assert reap_orphans(directory=owners) == []
        assert stray.poll() is None
    finally:
        stray.kill()
        stray.wait()


def test_a_mixed_group_loses_only_its_proven_members(
    owners: Path, spawn: Callable[[str], MiniOwner], cleanup: list[str]
) -> None:
    unproven, marked = _tag(), _tag()
    cleanup += [unproven, marked]
    # The subshell exits at once: the scrubbed sleep is reparented and cannot be proven ours.
    owner = spawn(f"({SCRUB} sleep {unproven} &); sleep {marked}")
    wait_for(lambda: all_alive(unproven, marked))
    [scrubbed] = live_sleeps(unproven)[unproven]
    info = read_stat(scrubbed)
    assert info is not None and info.pgrp == owner.pgid
    owner.kill()
    assert reap_orphans(directory=owners) == [owner.pgid]
    assert live_sleeps(marked)[marked] == []
    assert live_sleeps(unproven)[unproven] == [scrubbed]  # survives: decided, see reaper.py
    leader = read_stat(owner.pgid)  # the marked bash itself was one of the proven members
    assert leader is None or not leader.live


def test_our_own_children_and_group_are_never_reaped(owners: Path, cleanup: list[str]) -> None:
    a, b = _tag(), _tag()
    cleanup += [a, b]
    mine = subprocess.Popen(["sleep", a], env=owner_env(), start_new_session=True)
    note_group(mine.pid, owners)
    pid, start = dead_pid()
    # Marked by a dead owner, but in our own process group (no new session).
    in_our_group = subprocess.Popen(
        ["sleep", b], env={**os.environ, OWNER_PID_ENV: str(pid), OWNER_START_ENV: str(start)}
    )
    fake_lease(owners, pid, start, [os.getpgid(0)])
    try:
        assert reap_orphans(directory=owners) == []
        assert mine.poll() is None and in_our_group.poll() is None
        me = self_owner()
        assert me is not None and (owners / me.lease_name).exists()
    finally:
        for proc in (mine, in_our_group):
            proc.kill()
            proc.wait()


def test_bad_leases_are_ignored(owners: Path) -> None:
    owners.mkdir()
    (owners / "notes.txt").write_text("hello")
    (owners / "a.b.c.d").write_text("1\n")
    pid, start = dead_pid()
    fake_lease(owners, pid, start, []).write_text("garbage\n-5\n1\n\x00\xff")
    (owners / Owner("otherboot", "1", pid, start).lease_name).write_text("123\n")
    assert reap_orphans(directory=owners) == []
    assert sorted(p.name for p in owners.iterdir()) == ["a.b.c.d", "notes.txt"]
    assert reap_orphans(directory=owners / "missing") == []


# -- the spawn side --------------------------------------------------------------------------


def _groups(lease: Path) -> list[str]:
    """The pgid lines of a lease (a ``cg <path>`` line names this process's cgroup scopes)."""
    return [line for line in lease.read_text().splitlines() if line.isdigit()]


async def test_the_bash_runner_marks_and_records_its_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path))
    chunks: list[bytes] = []
    await run_in_group(
        [bash_path(), "-c", f"echo $$; echo ${OWNER_PID_ENV}:${OWNER_START_ENV}"],
        cwd=tmp_path,
        on_data=chunks.append,
        timeout_s=10,
    )
    pgid, marker = b"".join(chunks).decode().split()
    me = self_owner()
    assert me is not None and marker == f"{me.pid}:{me.start}"
    assert _groups(tmp_path / "owners" / me.lease_name) == [pgid]


async def test_background_tasks_are_marked_and_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tools.process.background import BackgroundTaskManager

    monkeypatch.setenv("NERVE_DATA_DIR", str(tmp_path))
    manager = BackgroundTaskManager(tmp_path / "session")
    snap = await manager.start(f"echo ${OWNER_PID_ENV}:${OWNER_START_ENV}", cwd=tmp_path)
    assert await manager.wait(snap.task_id, 10)
    me = self_owner()
    assert me is not None
    assert Path(snap.output_path).read_text().strip() == f"{me.pid}:{me.start}"
    pgid = manager.get(snap.task_id).pgid  # type: ignore[union-attr]
    assert _groups(tmp_path / "owners" / me.lease_name) == [str(pgid)]
