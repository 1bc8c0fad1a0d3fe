"""Instructions ``nerve`` executes to its first frame and to session ready, under callgrind.

    .venv/bin/python bench/instructions.py                      # this checkout, 3 runs each
    .venv/bin/python bench/instructions.py OTHER_CHECKOUT [--runs 3]   # and another, to compare

Wall and CPU time of the start-up (``bench/tui.py --first-frame``, ``bench/ab_first_frame.py``)
swing by 20-40 % between minutes on a shared machine, more than a start-up change moves them.
The count of instructions the process executes (``valgrind --tool=callgrind``, user space, all
threads) barely moves between runs (±0.2 % at the first frame), so it shows a change of 1 %.
It is not a time: it leaves out the kernel (file reads, page faults) and what a slow memory
access costs. Each checkout's real ``nerve`` runs on a pty as ``bench/tui.py`` runs it (fresh
HOME, two warm-up runs first that write the start-up code cache), with a ``sitecustomize`` that
ends the process right after the bench hook records the first frame (``frame``) or session
ready (``ready``); the count includes the interpreter's start (~60 M instructions).
Needs ``valgrind``; each run takes ~10 s. The ``sitecustomize`` does nothing unless
``NERVE_EXIT_AT`` is set (the warm-up runs).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from tui import run_in_pty, start_env  # noqa: E402

# Loaded by the measured process (PYTHONPATH): once the bench hook module is imported, end the
# process right after the record NERVE_EXIT_AT names is written.
SITECUSTOMIZE = """\
import builtins, os, sys
_import = builtins.__import__
def _hook(name, *args, **kwargs):
    module = _import(name, *args, **kwargs)
    probe = getattr(sys.modules.get("agent_cli.tui.bench_hook"), "FirstFrameProbe", None)
    if probe is not None:
        builtins.__import__ = _import
        method = "frame" if os.environ["NERVE_EXIT_AT"] == "frame" else "ready"
        original = getattr(probe, method)
        def _then_exit(self, *a):
            original(self, *a)
            os._exit(0)
        setattr(probe, method, _then_exit)
    return module
if os.environ.get("NERVE_EXIT_AT"):
    builtins.__import__ = _hook
"""


def count(checkout: Path, at: str, runs: int) -> list[int]:
    """Instructions to ``at`` ("frame" or "ready") of ``checkout``'s nerve, ``runs`` times."""
    nerve = checkout / ".venv" / "bin" / "nerve"
    out: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        hook_dir = Path(tmp) / "hook"
        hook_dir.mkdir()
        (hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env = start_env(tmp)
        env["NERVE_CODE_CACHE"] = f"{tmp}/code-cache.marshal"
        project = Path(tmp) / "project"
        project.mkdir()
        # the warm-up runs write the code cache, as tui.py's does; with the hook's directory on
        # sys.path already (the first one writes its __pycache__, a new modification time that
        # the module index's key includes), as a user's sys.path is the same from run to run
        env["PYTHONPATH"] = str(hook_dir)
        for i in range(2):
            env["NERVE_BENCH_FIRST_FRAME"] = f"{tmp}/warm-up-{i}.json"
            run_in_pty([str(nerve)], env, str(project))
        env["NERVE_EXIT_AT"] = at
        for i in range(runs):
            env["NERVE_BENCH_FIRST_FRAME"] = f"{tmp}/run-{i}.json"
            profile = Path(tmp) / f"callgrind.{i}"
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", str(nerve)]
            run_in_pty(argv, env, str(project))
            out.append(_total(profile))
    return out


def _total(profile: Path) -> int:
    for line in profile.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no total in {profile}: did the run reach the bench hook?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, nargs="?", help="another checkout (its own .venv)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    sides = [("this", ROOT)] + ([("other", args.other.resolve())] if args.other else [])
    for at, label in (("frame", "first frame"), ("ready", "session ready")):
        for name, checkout in sides:
            counts = count(checkout, at, args.runs)
            millions = ", ".join(f"{c / 1e6:.0f}" for c in counts)
            median = statistics.median(counts) / 1e6
            print(f"{label:14} {name:6} {median:7.0f} M instructions (runs: {millions})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
