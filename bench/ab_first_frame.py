"""Interleaved first-frame runs of this checkout and another (the code before a change).

    .venv/bin/python bench/ab_first_frame.py OTHER_CHECKOUT [--runs 16] [--rounds 3]

``bench/tui.py --first-frame`` runs five in a row, so a burst of load elsewhere on a shared
machine lands on one side only. This alternates single runs (each in a fresh HOME, after its own
warm-up run, as ``tui.py`` does; the order flips every pair) of the real ``nerve`` of each
checkout (``<checkout>/.venv/bin/nerve``, its ``bench/tui.py`` driving it) and prints, per round,
the medians of first frame and session ready, wall and CPU, and the load average.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _driver(checkout: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, checkout / "bench" / "tui.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.NERVE = checkout / ".venv" / "bin" / "nerve"  # type: ignore[attr-defined]
    return module


def _row(label: str, rows: list[tuple[float, float, float, float]]) -> str:
    frame, ready, cpu_frame, cpu_ready = (
        statistics.median(c) * 1000 for c in zip(*rows, strict=True)
    )
    return (
        f"{label:6} n={len(rows):<3} first frame {frame:4.0f} ms, session ready {ready:4.0f} ms"
        f" | CPU {cpu_frame:4.0f} / {cpu_ready:4.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (with its own .venv)")
    parser.add_argument("--runs", type=int, default=16, help="runs of each side per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sides = {"this": _driver(ROOT, "tui_this"), "other": _driver(args.other.resolve(), "tui_other")}
    for rnd in range(1, args.rounds + 1):
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"round {rnd} {time.strftime('%H:%M:%S')} load {load}", flush=True)
        results: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in sides}
        for i in range(args.runs):
            order = list(sides.items()) if i % 2 == 0 else list(sides.items())[::-1]
            for label, driver in order:
                results[label] += driver.first_frame("nerve", runs=1)
        for label, rows in results.items():
            print("  " + _row(label, rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
