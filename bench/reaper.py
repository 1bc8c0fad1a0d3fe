"""How long the start-up reaper takes, with a few hundred processes on the machine.

Run: ``.venv/bin/python bench/reaper.py [N]``. Starts N extra ``sleep`` processes (default
300), then prints medians of 30 runs (target for the scan: < 20 ms); nothing asserts.

* ``reap_orphans`` with no dead lease (every start of a healthy machine): no ``/proc`` scan;
* ``reap_orphans`` with a dead owner's lease whose pgid exists but is not ours: one full
  ``/proc/*/stat`` scan, ``environ`` read only for that group's members, nothing killed;
* a dead owner with 20 live orphan groups (40 processes): the scan plus SIGTERM and the wait
  until they are gone (the grace polling, not the scan, dominates);
* for comparison, reading ``/proc/*/environ`` of every process (a design without leases).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.process.owners import (  # noqa: E402
    OWNER_PID_ENV,
    OWNER_START_ENV,
    Owner,
    read_stat,
    self_owner,
)
from tools.process.reaper import reap_orphans  # noqa: E402

RUNS = 30


def _median_ms(fn: Callable[[], object], before: Callable[[], object] = lambda: None) -> float:
    times = []
    for _ in range(RUNS):
        before()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _all_environ() -> int:
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    n += len(fh.read())
            except OSError:
                pass
    return n


def main() -> None:
    extra = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    me = self_owner()
    assert me is not None, "needs /proc"
    sleeps = [subprocess.Popen(["sleep", "600"]) for _ in range(extra)]
    dead = subprocess.Popen(["sleep", "0"])
    dead_start = read_stat(dead.pid).start  # type: ignore[union-attr]
    dead.wait()
    unrelated = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            owners = Path(tmp)
            lease = owners / Owner(me.boot, me.pidns, dead.pid, dead_start).lease_name
            nproc = sum(1 for e in os.listdir("/proc") if e.isdigit())
            print(f"processes on the machine: {nproc}")
            empty = _median_ms(lambda: reap_orphans(directory=owners))
            print(f"reap_orphans, no dead lease:            {empty:7.3f} ms")

            def write_lease() -> None:
                lease.write_text(f"{unrelated.pid}\n")

            scan = _median_ms(lambda: reap_orphans(directory=owners), write_lease)
            print(f"reap_orphans, full scan, nothing ours:  {scan:7.3f} ms  (target < 20 ms)")

            env = {**os.environ, OWNER_PID_ENV: str(dead.pid), OWNER_START_ENV: str(dead_start)}
            groups: list[subprocess.Popen[bytes]] = []

            def spawn_orphans() -> None:
                for g in groups:
                    g.wait()
                groups.clear()
                for _ in range(20):
                    cmd = ["bash", "-c", "sleep 600 & sleep 600"]
                    groups.append(subprocess.Popen(cmd, env=env, start_new_session=True))
                time.sleep(0.05)  # let each bash start its sleeps
                lease.write_text("".join(f"{g.pid}\n" for g in groups))

            reap = _median_ms(lambda: reap_orphans(directory=owners), spawn_orphans)
            print(f"reap_orphans, 20 orphan groups ended:   {reap:7.3f} ms  (incl. TERM wait)")
            for g in groups:
                g.wait()
            every = _median_ms(_all_environ)
            print(f"for comparison, read every environ:     {every:7.3f} ms")
    finally:
        for p in [*sleeps, unrelated]:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
