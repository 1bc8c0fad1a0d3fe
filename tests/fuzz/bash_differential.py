"""The long run of the bash differential test (``tests/permissions/bash/differential.py``).

    .venv/bin/python -m tests.fuzz.bash_differential --cases 20000 [--seed N] [--jobs 2]

Generates commands from the word grammar, asks the permission engine, runs each with the real
bash in a throwaway folder, and reports how many were tried, allowed, made a canary, and how
many were unsafe (allowed without a prompt yet made a canary, or ran the text canary without
a ``Bash(touch:*)`` deny rule denying it). Exits 1 when any was unsafe, printing them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from hypothesis import HealthCheck, Phase, given, seed, settings

from permissions.types import Decision
from tests.permissions.bash.differential import Outcome, check, commands


def _generate(count: int, rng_seed: int) -> list[str]:
    out: list[str] = []

    @seed(rng_seed)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(commands())
    def collect(command: str) -> None:
        out.append(command)

    collect()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    start = time.monotonic()
    cases = _generate(args.cases, args.seed)
    stats: Counter[str] = Counter()
    unsafe: list[Outcome] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for outcome in pool.map(check, cases, chunksize=16):
            stats["tried"] += 1
            stats["allowed"] += outcome.decisions["default"] is Decision.ALLOW
            stats["canary made"] += bool(outcome.made)
            stats["denied under Bash(touch:*)"] += outcome.decisions["deny-touch"] is Decision.DENY
            if outcome.failure is not None:
                unsafe.append(outcome)
    stats["unsafe"] = len(unsafe)
    print(json.dumps({"seed": args.seed, "seconds": round(time.monotonic() - start), **stats}))
    for o in unsafe[:50]:
        print(f"UNSAFE {o.failure}: {o.command!r}")
    return 1 if unsafe else 0


if __name__ == "__main__":
    sys.exit(main())
