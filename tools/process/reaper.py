"""Kill what a dead Nerve left running: its commands' scopes, process groups and escapees.

Nothing runs when Nerve is SIGKILLed, so its commands' groups (a foreground ``sleep 30``, a
background dev server) live on. The next Nerve start calls :func:`start_reaper` to end them.
Identities, markers and leases are written by ``tools.process.owners``. A group is known to be
ours twice over:

* **Lease.** Each spawn appends its pgid to a lease file named after the owner's identity
  (boot id, pid namespace, pid, start time) in ``<data dir>/owners/``. Only groups listed in
  the lease of a dead owner (pid gone, a zombie, or reused: other start time) are candidates.
  A lease is deleted once nothing of its groups is left (or at a clean exit); live owners'
  leases are not touched.
* **Marker.** Each spawn gets ``NERVE_OWNER_PID`` / ``NERVE_OWNER_START`` in its environment,
  which children inherit. A listed group is killed (SIGTERM, grace, SIGKILL) only if it is a
  session-leader group (``sid == pgid``, as ``start_new_session`` makes it) and every live
  member carries the dead owner's marker or descends from one that does. A group that also
  holds an unproven process is not killed as a group: only its proven members are, one by one,
  each start time re-checked first. Our own group and our ancestors' are never touched.
* **Scope.** Where cgroups are writable (``tools.process.containment``), the lease also names the dead
  owner's scope directory (a ``cg <path>`` line): everything in it is killed and the directory
  removed, whatever process group or session its members moved to.
* **Escapees.** A process that left its group (``setsid``) but still carries a dead owner's
  marker, while that owner's lease exists, is killed on its own (start time re-checked). Nothing
  Nerve started outlives it: :func:`sweep_own_marked` does the same for this process at exit,
  and :func:`close_scopes` at session end, after killing the session's own scopes.

The lease makes a stray marker harmless (no lease, no kill) and lets a start with no dead lease
skip ``/proc`` entirely.

Limits: Linux only (no ``/proc``: a no-op); a process that scrubs its environment and loses
its marked parent is not proven ours; a crash between spawn and lease write loses that group;
leases are per data dir (``NERVE_DATA_DIR`` separates them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from tools.process.containment import close_scopes_now, kill_cgroup_tree
from tools.process.owners import (
    Owner,
    ProcInfo,
    ancestors,
    lease_dir,
    marker,
    read_stat,
    scan_procs,
    self_owner,
)
from tools.records import datarecord

__all__ = [
    "GRACE_S",
    "close_scopes",
    "reap_orphans",
    "start_reaper",
    "sweep_own_marked",
]

GRACE_S = 0.5  # between SIGTERM and SIGKILL
_POLL_S = 0.02
_log = logging.getLogger(__name__)


def _alive(owner: Owner) -> bool:
    info = read_stat(owner.pid)
    return info is not None and info.live and info.start == owner.start


Proven = frozenset[tuple[int, int]]  # (pid, start) of processes already proven ours


@datarecord(frozen=True, slots=True)
class _Plan:
    groups: tuple[int, ...]  # killed as a group (killpg)
    singles: tuple[tuple[int, int, int], ...]  # (pid, start, pgid): proven members of mixed groups
    proven: Proven

    @property
    def pgids(self) -> set[int]:
        return {*self.groups, *(pg for _, _, pg in self.singles)}


def _plan(
    candidates: Mapping[int, tuple[int, int]],
    table: Mapping[int, ProcInfo],
    protected: set[int],
    known: Proven = frozenset(),
) -> _Plan:
    """What to signal now. ``candidates``: pgid -> the dead owner (pid, start) that listed it.

    ``known`` carries the proof of an earlier round: a child whose marked parent has died
    since (reparented, so no longer a visible descendant) is still ours.
    """
    members: dict[int, list[ProcInfo]] = {}
    for info in table.values():
        if info.live and info.pgrp in candidates:
            members.setdefault(info.pgrp, []).append(info)
    groups: list[int] = []
    singles: list[tuple[int, int, int]] = []
    proven_all: set[tuple[int, int]] = set()
    for pgid, procs in members.items():
        if pgid in protected or any(p.pid in protected or p.sid != pgid for p in procs):
            continue
        owner = candidates[pgid]
        roots = {p.pid for p in procs if (p.pid, p.start) in known or marker(p.pid) == owner}
        if not roots:
            continue  # the pgid was reused by something that is not ours
        proven = [p for p in procs if p.pid in roots or ancestors(p.ppid, table) & roots]
        proven_all.update((p.pid, p.start) for p in proven)
        if len(proven) == len(procs):
            groups.append(pgid)
        else:
            singles.extend((p.pid, p.start, pgid) for p in proven)
    return _Plan(tuple(sorted(groups)), tuple(singles), frozenset(proven_all))


def _signal(plan: _Plan, sig: int) -> None:
    for pgid in plan.groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid, start, _ in plan.singles:
        info = read_stat(pid)
        if info is not None and info.start == start:  # still the process we proved ours
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, but is not ours to signal
    return True


def _read_lease(path: Path) -> set[int]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return set()
    return {int(line) for line in text.split() if line.isdigit() and int(line) > 1}


def _lease_scopes(path: Path) -> list[Path]:
    """The ``cg <path>`` lines of a lease: a cgroup directory of ours (named ``nerve.*``)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    found = [Path(line[3:]) for line in lines if line.startswith("cg /")]
    # only a cgroup directory of ours: a lease naming anything else is ignored
    return [p for p in found if p.name.startswith("nerve.") and (p / "cgroup.procs").exists()]


def _end_scopes(dead: Mapping[Path, Owner]) -> set[Path]:
    """Kill and remove the dead owners' cgroup scopes; the leases whose scopes are not gone."""
    left: set[Path] = set()
    for path in dead:
        for root in _lease_scopes(path):
            if root.is_dir() and not kill_cgroup_tree(root):
                left.add(path)
    return left


def _dead_leases(directory: Path, me: Owner, exclude_pid: int) -> dict[Path, Owner]:
    try:
        names = os.listdir(directory)
    except OSError:
        return {}
    dead: dict[Path, Owner] = {}
    for name in names:
        owner = Owner.from_lease_name(name)
        if owner is None:
            continue
        path = directory / name
        if owner.boot != me.boot:
            with contextlib.suppress(OSError):
                path.unlink()  # a previous boot: every process it named is gone
            continue
        if owner.pidns != me.pidns or owner.pid in (me.pid, exclude_pid):
            continue  # another pid namespace cannot be judged from here; us: alive
        if not _alive(owner):
            dead[path] = owner
    return dead


def reap_orphans(
    *, exclude_pid: int | None = None, directory: Path | None = None, grace_s: float = GRACE_S
) -> list[int]:
    """Kill the leftover process groups of dead Nerve processes; return the pgids signalled.

    ``exclude_pid`` (default: this process) is treated as a live owner and, with its group
    and ancestors, is never signalled. Never raises; a no-op without ``/proc``.
    """
    try:
        return _reap(os.getpid() if exclude_pid is None else exclude_pid, directory, grace_s)
    except Exception:  # the reaper must never take a session down
        _log.warning("reaping orphaned process groups failed", exc_info=True)
        return []


def _reap(exclude_pid: int, directory: Path | None, grace_s: float) -> list[int]:
    me = self_owner()
    if me is None or not os.path.isdir("/proc"):
        return []
    directory = directory or lease_dir()
    dead = _dead_leases(directory, me, exclude_pid)
    if not dead:
        return []
    # owners without a cgroup scope: their escapees are found by marker (a /proc environ scan)
    unscoped = {(o.pid, o.start) for p, o in dead.items() if not _lease_scopes(p)}
    scopes_left = _end_scopes(dead)
    candidates: dict[int, tuple[int, int]] = {}
    for path, owner in dead.items():
        for pg in (pg for pg in _read_lease(path) if _group_exists(pg)):
            candidates[pg] = (owner.pid, owner.start)
    left: set[int] = set()
    signalled: list[int] = []
    if candidates or unscoped:
        table = scan_procs()
        protected = {
            os.getpgid(0),
            *ancestors(exclude_pid, table),
            *ancestors(os.getpid(), table),
        }
        protected |= {table[p].pgrp for p in list(protected) if p in table}
        if candidates:
            signalled, left = _end_groups(candidates, table, protected, grace_s)
        if unscoped:
            table = scan_procs() if signalled else table
            # a group just killed above may still show its members for a moment: not escapees
            done = protected | set(signalled)
            signalled = sorted({*signalled, *_end_marked(table, unscoped, done, grace_s)})
    _forget_finished({p: o for p, o in dead.items() if p not in scopes_left}, candidates, left)
    return signalled


def _end_groups(
    candidates: Mapping[int, tuple[int, int]],
    table: Mapping[int, ProcInfo],
    protected: set[int],
    grace_s: float,
) -> tuple[list[int], set[int]]:
    """End the dead owners' proven groups; (pgids signalled, pgids that may still be ours)."""
    plan = _plan(candidates, table, protected)
    kept = _plan(candidates, table, set()).pgids - plan.pgids  # ours, but protected: not now
    signalled = sorted(plan.pgids)
    if signalled:
        _log.info("ending orphaned process groups of dead Nerve processes: %s", signalled)
        known = plan.proven
        _signal(plan, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while plan.groups or plan.singles:
            time.sleep(_POLL_S)
            plan = _plan(candidates, scan_procs(), protected, known)
            if time.monotonic() >= deadline:
                _signal(plan, signal.SIGKILL)
                break  # the lease stays: the next start checks the SIGKILLed groups are gone
    return signalled, plan.pgids | kept


def _forget_finished(
    dead: Mapping[Path, Owner], candidates: Mapping[int, tuple[int, int]], left: set[int]
) -> None:
    """Delete each dead owner's lease unless one of its groups (``left``) may still be ours."""
    for path, owner in dead.items():
        if not any(candidates.get(pg) == (owner.pid, owner.start) for pg in left):
            with contextlib.suppress(OSError):
                path.unlink()


def _end_marked(
    table: Mapping[int, ProcInfo],
    owners: set[tuple[int, int]],
    protected: set[int],
    grace_s: float,
) -> list[int]:
    """SIGTERM, then after ``grace_s`` SIGKILL, every live process carrying one of ``owners``'
    markers, outside ``protected`` (pids and process groups); returns the pids signalled."""
    marked = [
        (p.pid, p.start)
        for p in table.values()
        if p.live
        and p.pid not in protected
        and p.pgrp not in protected
        and p.pid != os.getpid()
        and marker(p.pid) in owners
    ]

    def still(pid: int, start: int) -> bool:
        info = read_stat(pid)
        return info is not None and info.live and info.start == start

    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [(pid, start) for pid, start in marked if still(pid, start)]
        for pid, _ in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + (grace_s if sig == signal.SIGTERM else 0)
        while alive and time.monotonic() < deadline:
            time.sleep(_POLL_S)
            alive = [(pid, start) for pid, start in alive if still(pid, start)]
        if not alive:
            break
    return sorted(pid for pid, _ in marked)


def sweep_own_marked(grace_s: float = GRACE_S) -> list[int]:
    """At exit: end every process that still carries *this* process's marker (it left its
    process group and no cgroup held it). Never raises; returns the pids signalled."""
    me = self_owner()
    if me is None or not os.path.isdir("/proc"):
        return []
    try:
        table = scan_procs()
        protected = ancestors(os.getpid(), table) | {os.getpgid(0)}
        return _end_marked(table, {(me.pid, me.start)}, protected, grace_s)
    except Exception:
        _log.warning("sweeping this process's leftovers failed", exc_info=True)
        return []


def start_reaper(directory: Path | None = None) -> threading.Thread | None:
    """Run :func:`reap_orphans` once in a daemon thread (start-up does not wait for it)."""
    if not os.path.isdir("/proc"):
        return None
    directory = directory or lease_dir()  # resolved now: the environment may change later
    thread = threading.Thread(
        target=reap_orphans, kwargs={"directory": directory}, name="nerve-reaper", daemon=True
    )
    thread.start()
    return thread


async def close_scopes() -> None:
    """Session end: ``containment.close_scopes_now`` off the event loop, then the marker sweep
    for anything that left its process group where no cgroup held it."""
    import asyncio

    await asyncio.to_thread(close_scopes_now)
    await asyncio.to_thread(sweep_own_marked)
