"""Instructions ``nerve`` executes to its first frame, to session ready and in ``-p`` runs,
under callgrind.

    .venv/bin/python bench/instructions.py                      # this checkout, 3 runs each
    .venv/bin/python bench/instructions.py OTHER_CHECKOUT [--runs 3]   # and another, to compare
    .venv/bin/python bench/instructions.py OTHER_CHECKOUT --cases p-text,p-tools --only-other

Wall and CPU time of the start-up (``bench/tui.py --first-frame``, ``bench/ab_first_frame.py``)
swing by 20-40 % between minutes on a shared machine, more than a start-up change moves them.
The count of instructions the process executes (``valgrind --tool=callgrind``, user space, all
threads) barely moves between runs (±0.2 % at the first frame), so it shows a change of 1 %.
It is not a time: it leaves out the kernel (file reads, page faults) and what a slow memory
access costs. Each checkout's real ``nerve`` runs on a pty as ``bench/tui.py`` runs it (fresh
HOME, two warm-up runs first: the ``.pyc`` files, and whatever an older checkout kept in its
data dir), with a ``sitecustomize`` that
ends the process right after the bench hook records the first frame (``frame``) or session
ready (``ready``); the count includes the interpreter's start (~60 M instructions).
Needs ``valgrind``; each run takes ~10 s. The ``sitecustomize`` does nothing unless
``NERVE_EXIT_AT`` is set (the warm-up runs).

The ``-p`` cases are ``bench/e2e.py``'s (a) and (b): ``nerve -p hi`` (``p-text``) and the
20 tool calls over 5 model requests (``p-tools``), each against a scripted server in this
process, after two warm-up runs in the same data dir; the count is the ``nerve`` process's own
from start to exit (the commands its Bash tool starts are not followed).
``--cases`` picks among ``frame``, ``ready``, ``p-text`` and ``p-tools`` (default: all);
``--only-other`` measures only OTHER_CHECKOUT (a baseline kept while this one changes).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from e2e import TimedServer, _env, _project, scenario_text, scenario_tools  # noqa: E402
from tui import run_in_pty, start_env  # noqa: E402

CASES = {
    "frame": "first frame",
    "ready": "session ready",
    "p-text": "-p text",
    "p-tools": "-p 20 tools",
}

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
        project = Path(tmp) / "project"
        project.mkdir()
        # two warm-up runs (the .pyc files, and whatever a checkout keeps in its data dir), with
        # the hook's directory on sys.path already, as a user's sys.path is the same each run
        env["PYTHONPATH"] = str(hook_dir)
        for i in range(2):
            env["NERVE_BENCH_FIRST_FRAME"] = f"{tmp}/warm-up-{i}.json"
            run_in_pty([str(nerve)], env, str(project))
        env["NERVE_EXIT_AT"] = at
        for i in range(runs):
            env["NERVE_BENCH_FIRST_FRAME"] = f"{tmp}/run-{i}.json"
            profile = Path(tmp) / f"callgrind.{i}"
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", str(nerve)]
            run_in_pty(argv, env, str(project), timeout=600)  # a loaded machine: callgrind is slow
            out.append(_total(profile))
    return out


def count_print(checkout: Path, case: str, runs: int) -> list[int]:
    """Instructions of ``checkout``'s ``nerve -p`` in ``case`` ("p-text" or "p-tools"), start
    to exit, ``runs`` times (after two warm-up runs in the same data dir)."""
    nerve = checkout / ".venv" / "bin" / "nerve"
    out: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = _project(root)
        env = _env(root / "run", None)
        argv = [str(nerve), "-p", "hi"]
        if case == "p-tools":
            argv = [str(nerve), "-p", "use the tools", "--output-format", "stream-json"]
            argv += ["--allowedTools", "Bash(true)"]
        for i in range(-2, runs):
            profile = root / f"callgrind.{i}"
            prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}"]
            _play_print([*prefix, *argv] if i >= 0 else argv, case, project, env)
            if i >= 0:
                out.append(_total(profile))
    return out


def _play_print(argv: list[str], case: str, project: Path, env: dict[str, str]) -> None:
    server = TimedServer(scenario_text() if case == "p-text" else scenario_tools(project))
    server.start()
    try:
        env = {**env, "ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": server.base_url}
        proc = subprocess.run(argv, cwd=project, env=env, capture_output=True, timeout=600)
    finally:
        server.stop()
    if proc.returncode or server.failures or server.unconsumed_turns():
        raise RuntimeError(f"{case}: exit {proc.returncode}: {proc.stderr[-2000:]!r}")


def _total(profile: Path) -> int:
    for line in profile.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no total in {profile}: did the run reach the bench hook?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, nargs="?", help="another checkout (its own .venv)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES)
    )
    parser.add_argument("--only-other", action="store_true", help="measure OTHER_CHECKOUT only")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    cases = [c for c in args.cases.split(",") if c]
    if unknown := set(cases) - set(CASES):
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    sides = [] if args.only_other else [("this", ROOT)]
    sides += [("other", args.other.resolve())] if args.other else []
    for case in cases:
        for name, checkout in sides:
            if case in ("frame", "ready"):
                counts = count(checkout, case, args.runs)
            else:
                counts = count_print(checkout, case, args.runs)
            millions = ", ".join(f"{c / 1e6:.0f}" for c in counts)
            median = statistics.median(counts) / 1e6
            print(
                f"{CASES[case]:14} {name:6} {median:7.0f} M instructions (runs: {millions})",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
