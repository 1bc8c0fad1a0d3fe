"""End-to-end speed of the ``nerve`` process against the scripted model server.

Run: ``.venv/bin/python bench/e2e.py [--rounds 5] [--no-profile]``. Prints medians; nothing here
asserts. Each measured run is a fresh ``nerve`` process in an isolated HOME / data / config dir,
talking to a ``ScriptedServer`` on 127.0.0.1 in this process.

Cases
  a. ``nerve -p hi``: one text turn.
  b. ``nerve -p ... --output-format stream-json``: 20 tool calls over 4 model turns (5 Read,
     5 Glob, 5 Grep, 5 Bash ``true``), then a closing text turn: 5 model requests in all.
  c. ``nerve --version``.
  Reference rows (not Nerve): the interpreter alone (``python -c pass``) and the interpreter
  importing the Anthropic SDK (``python -c "import anthropic"``), to attribute start-up time.
  With ``--claude [BINARY]``: Claude Code itself (default: the CLI the Agent SDK bundles) on
  case (b)'s scenario, the same flags (``--verbose``, which its stream-json needs), nonessential
  traffic off, the server's request checks relaxed (they are written for Nerve's requests);
  each round runs Nerve's and Claude Code's (b) back to back, and the table ends with (b)'s wall
  time as a fraction of Claude Code's, against the budget (<= 0.6).

Measures
  wall      spawn -> exit of the child, with ``os.wait4``.
  cpu       the child's user + system CPU time (``os.wait4``): less sensitive to a busy machine.
  peak RSS  the child's ``ru_maxrss`` from ``os.wait4`` (Linux: KiB).
  model     the scripted server's serving time, summed over requests: from the moment a request
            (headers and body) is in, to the last byte of its answer written. Measured on the
            server side, so it is what a real model's streaming would replace.
  tools     for each model turn, the longest ``duration_ms`` among that turn's tool-result ``user`` frames
            events (stream-json). All calls of one turn are concurrency-safe and fewer than the
            executor's limit, so they run together and the longest one is how long the turn's
            tools held the wall clock. ``duration_ms`` is the whole pipeline of that call (checks,
            permission, run, budget), so this is generous to Nerve: the slowest call's own
            pipeline steps are counted as tool time, not overhead.
  overhead  wall - model - tools: what Nerve adds around the model and the tools — interpreter
            start, imports, settings, session setup, the SDK, the loop, the other calls'
            pipelines, transcript writes, exit. Target for (b): < 1 s.
  startup   spawn -> the first request arrives at the server (part of overhead).
  gaps      sum over turns of (end of answer k -> request k+1 arrives): tools + loop per turn.
  teardown  end of the last answer -> exit.

Targets: (a) <= 450 ms wall; (b) overhead <= 400 ms; ``--version`` < 80 ms. The import-time
profile (``python -X importtime`` of case a) counts the modules ``nerve -p`` imports (per
top-level package; ``--modules`` lists them all), checks that none of ``anthropic``,
``textual``, ``rich.markdown`` is among them, and lists the costliest, cumulative and self.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.testing import Match, Scenario, ScriptedServer, Turn, text, tool_use  # noqa: E402

NERVE = str(Path(sys.executable).with_name("nerve"))
VERSION_TARGET_MS = 80.0
TEXT_TARGET_MS = 450.0
OVERHEAD_TARGET_MS = 400.0
FORBIDDEN = ("anthropic", "textual", "rich.markdown")  # never on the first-party print path
ROUNDS = 5
CASES = ("text", "tools", "version", "python", "sdk")
CLAUDE_BUDGET = 0.6  # (b)'s wall time at most this fraction of Claude Code's on the same run
REFERENCE = {"python": ["-c", "pass"], "sdk": ["-c", "import anthropic"]}


class TimedServer(ScriptedServer):
    """The scripted server, timing each request from "in" to "last byte out"."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        self.spans: list[tuple[float, float]] = []

    def _handle(self, h: Any) -> None:
        # The body is read inside super()._handle; the headers are in by now, the body is tiny.
        start = time.perf_counter()
        try:
            super()._handle(h)
        finally:
            self.spans.append((start, time.perf_counter()))


@dataclass
class Run:
    wall_ms: float
    cpu_ms: float
    rss_kib: int
    rc: int
    stdout: str
    stderr: str
    spawned: float
    exited: float
    spans: list[tuple[float, float]] = field(default_factory=list)


def _env(root: Path, base_url: str | None) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_"))
    }
    # An installed nerve runs from cached bytecode; without this the warm-up round could not
    # write the .pyc files and every run would compile ~180 modules from source (~0.3 s CPU).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    home = root / "home"
    for d in (home, root / "policy", root / "claude-policy"):
        d.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        NERVE_DATA_DIR=str(root / "data"),
        NERVE_CONFIG_DIR=str(home / ".nerve"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        NERVE_POLICY_DIR=str(root / "policy"),
        NERVE_CLAUDE_POLICY_DIR=str(root / "claude-policy"),
    )
    if base_url is not None:
        env.update(ANTHROPIC_API_KEY="bench-key", ANTHROPIC_BASE_URL=base_url)
    return env


def _spawn(argv: Sequence[str], cwd: Path, env: dict[str, str], server: TimedServer | None) -> Run:
    """Run ``argv`` to completion; wall time and peak RSS come from ``os.wait4``."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        spawned = time.perf_counter()
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        exited = time.perf_counter()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        return Run(
            wall_ms=(exited - spawned) * 1000,
            cpu_ms=(usage.ru_utime + usage.ru_stime) * 1000,
            rss_kib=usage.ru_maxrss,
            rc=proc.returncode,
            stdout=out.read(),
            stderr=err.read(),
            spawned=spawned,
            exited=exited,
            spans=list(server.spans) if server is not None else [],
        )


def _project(root: Path) -> Path:
    project = root / "project"
    (project / "pkg").mkdir(parents=True, exist_ok=True)
    for i in range(5):
        body = "".join(f"def f{i}_{n}(x):\n    return x + {n}\n\n" for n in range(40))
        (project / "pkg" / f"mod{i}.py").write_text(body)
    return project


def scenario_text() -> Scenario:
    return Scenario.of(Turn([text("Hello from the scripted model.")]))


def scenario_tools(project: Path) -> Scenario:
    """20 calls over 4 turns (each turn 5 concurrency-safe calls), then a closing text turn."""
    files = [str(project / "pkg" / f"mod{i}.py") for i in range(5)]
    batches = [
        [tool_use("Read", {"file_path": f}) for f in files],
        [tool_use("Glob", {"pattern": f"**/mod{i}.py"}) for i in range(5)],
        [tool_use("Grep", {"pattern": f"def f{i}_1", "output_mode": "content"}) for i in range(5)],
        [tool_use("Bash", {"command": "true"}) for _ in range(5)],
    ]
    turns = []
    for t, blocks in enumerate(batches):
        match = Match(tool_result_for=f"toolu_s{t - 1}_4") if t else None
        turns.append(Turn(list(blocks), match=match))
    turns.append(Turn([text("All done.")], match=Match(tool_result_for="toolu_s3_4")))
    return Scenario(turns)


def _tool_time_ms(stream_json: str) -> tuple[float, float, int, int]:
    """(per-turn longest summed, plain sum, calls finished, calls denied) from stream-json:
    one ``user`` frame per tool result (with Nerve's ``duration_ms``), the denials in the
    ``result`` frame."""
    longest: dict[str, float] = {}
    total = 0.0
    calls = denied = 0
    for line in stream_json.splitlines():
        try:
            frame = json.loads(line)
        except ValueError:
            continue
        if frame.get("type") == "result":
            denied += len(frame.get("permission_denials") or [])
        if frame.get("type") != "user":
            continue
        for block in frame.get("message", {}).get("content", []):
            if block.get("type") != "tool_result":
                continue
            calls += 1
            turn = str(block.get("tool_use_id", "")).rsplit("_", 1)[0]  # toolu_s<turn>_<block>
            ms = float(frame.get("duration_ms") or 0)
            total += ms
            longest[turn] = max(longest.get(turn, 0.0), ms)
    return sum(longest.values()), total, calls, denied


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_mib: float
    model: float = 0.0
    tools: float = 0.0
    tools_sum: float = 0.0
    startup: float = 0.0
    gaps: float = 0.0
    teardown: float = 0.0

    @property
    def overhead(self) -> float:
        return self.wall - self.model - self.tools


def _sample(run: Run, tools: tuple[float, float] = (0.0, 0.0)) -> Sample:
    s = Sample(run.wall_ms, run.cpu_ms, run.rss_kib / 1024, tools=tools[0], tools_sum=tools[1])
    if run.spans:
        spans = sorted(run.spans)
        s.model = sum(b - a for a, b in spans) * 1000
        s.startup = (spans[0][0] - run.spawned) * 1000
        s.gaps = sum(spans[i + 1][0] - spans[i][1] for i in range(len(spans) - 1)) * 1000
        s.teardown = (run.exited - spans[-1][1]) * 1000
    return s


def bench_case(name: str, root: Path, rounds: int) -> list[Sample]:
    project = _project(root)
    samples: list[Sample] = []
    for i in range(rounds + 1):  # round 0 warms the OS caches and .pyc files; not counted
        sample = _one_run(name, project, root / f"{name}-{i}")
        if i:
            samples.append(sample)
    return samples


def bench_tools_and_claude(root: Path, rounds: int, claude: str) -> dict[str, list[Sample]]:
    """Case (b) and Claude Code on the same scenario, back to back in each round (the order
    flips every round), so a burst of load elsewhere lands on both."""
    project = _project(root)
    samples: dict[str, list[Sample]] = {"tools": [], "claude": []}
    for i in range(rounds + 1):  # round 0 warms both; not counted
        order = ["tools", "claude"] if i % 2 == 0 else ["claude", "tools"]
        for name in order:
            sample = _one_run(name, project, root / f"{name}-{i}", claude)
            if i:
                samples[name].append(sample)
    return samples


def _one_run(name: str, project: Path, run_root: Path, claude: str | None = None) -> Sample:
    if name in REFERENCE or name == "version":
        argv = [NERVE, "--version"] if name == "version" else [sys.executable, *REFERENCE[name]]
        run = _spawn(argv, project, _env(run_root, None), None)
        sample = _sample(run)
    else:
        scenario = scenario_text() if name == "text" else scenario_tools(project)
        server = TimedServer(scenario)
        server.start()
        try:
            env = _env(run_root, server.base_url)
            if name == "text":
                argv = [NERVE, "-p", "hi"]
            else:
                argv = [NERVE, "-p", "use the tools", "--output-format", "stream-json"]
                argv += ["--allowedTools", "Bash(true)"]
            if name == "claude" and claude is not None:
                argv = [claude, *argv[1:5], "--verbose", *argv[5:]]
                env.update(CLAUDE_ENV)
                with _relaxed_checks():
                    run = _spawn(argv, project, env, server)
            else:
                run = _spawn(argv, project, env, server)
        finally:
            server.stop()
        if server.failures or server.unconsumed_turns():
            raise SystemExit(f"{name}: scripted server problems: {server.report()['failures']}")
        tools = (0.0, 0.0)
        if name in ("tools", "claude"):
            longest, total, calls, denied = _tool_time_ms(run.stdout)
            if calls != 20 or denied:
                raise SystemExit(
                    f"{name}: expected 20 allowed calls, got {calls} ({denied} denied)"
                )
            tools = (longest, total)
        sample = _sample(run, tools)
    if run.rc != 0:
        raise SystemExit(f"{name}: exit {run.rc}\n{run.stderr[-2000:]}")
    return sample


# Claude Code on the scripted server: no update checks, telemetry or other side requests.
CLAUDE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@contextmanager
def _relaxed_checks() -> Iterator[None]:
    """The scripted server without its request checks, which are written for Nerve's requests
    (Claude Code sends a ``system`` role message inside ``messages``; see
    ``bench/capture_claude_frames.py``)."""
    import agent_cli.testing.scripted_server as scripted

    saved = scripted.check_request, scripted.check_thinking
    scripted.check_request = lambda body: []  # type: ignore[assignment]
    scripted.check_thinking = lambda body, thoughts: []  # type: ignore[assignment]
    try:
        yield
    finally:
        scripted.check_request, scripted.check_thinking = saved


def bundled_claude() -> str | None:
    """The Claude Code CLI the Agent SDK bundles, if installed."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    binary = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(binary) if binary.exists() else None


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def _table(results: dict[str, list[Sample]]) -> None:
    header = (
        f"{'case':<26}{'wall ms':>9}{'cpu ms':>8}{'RSS MiB':>9}{'model':>8}{'tools':>8}{'overhead':>10}"
        f"{'startup':>9}{'gaps':>8}{'teardown':>10}"
    )
    print(header)
    print("-" * len(header))
    labels = {
        "text": "a. -p, one text turn",
        "tools": "b. -p, 20 tool calls",
        "version": "c. --version",
        "python": "ref: python -c pass",
        "sdk": "ref: import anthropic",
        "claude": "ref: Claude Code, (b)",
    }
    for name, samples in results.items():
        m = {k: _median([getattr(s, k) for s in samples]) for k in vars(samples[0])}
        overhead = _median([s.overhead for s in samples])
        dash = "-"
        timed = name in ("text", "tools", "claude")
        model = f"{m['model']:.0f}" if timed else dash
        tools = f"{m['tools']:.0f}" if name in ("tools", "claude") else dash
        ovh = f"{overhead:.0f}" if timed else dash
        startup = f"{m['startup']:.0f}" if timed else dash
        gaps = f"{m['gaps']:.0f}" if timed else dash
        teardown = f"{m['teardown']:.0f}" if timed else dash
        print(
            f"{labels[name]:<26}{m['wall']:>9.0f}{m['cpu']:>8.0f}{m['rss_mib']:>9.1f}{model:>8}{tools:>8}"
            f"{ovh:>10}{startup:>9}{gaps:>8}{teardown:>10}"
        )
    print()
    if "text" in results:
        a = _median([x.wall for x in results["text"]])
        verdict = "meets" if a <= TEXT_TARGET_MS else "MISSES"
        print(f"(a) one text turn {a:.0f} ms {verdict} the target <= {TEXT_TARGET_MS:.0f} ms")
    if "tools" in results:
        s = results["tools"]
        print(
            f"(b) tool time: per-turn longest {_median([x.tools for x in s]):.0f} ms, "
            f"plain sum of 20 calls {_median([x.tools_sum for x in s]):.0f} ms"
        )
        b_overhead = _median([x.overhead for x in s])
        verdict = "meets" if b_overhead <= OVERHEAD_TARGET_MS else "MISSES"
        print(
            f"(b) overhead {b_overhead:.0f} ms {verdict} the target <= {OVERHEAD_TARGET_MS:.0f} ms"
        )
    if "version" in results:
        v = _median([x.wall for x in results["version"]])
        verdict = "meets" if v < VERSION_TARGET_MS else "MISSES"
        print(f"(c) --version {v:.0f} ms {verdict} the target < {VERSION_TARGET_MS:.0f} ms")
    if "claude" in results and "tools" in results:
        ours = _median([x.wall for x in results["tools"]])
        theirs = _median([x.wall for x in results["claude"]])
        ratio = ours / theirs
        verdict = "meets" if ratio <= CLAUDE_BUDGET else "MISSES"
        print(
            f"(b) vs Claude Code: {ours:.0f} / {theirs:.0f} ms = {ratio:.2f}x, {verdict} the"
            f" budget <= {CLAUDE_BUDGET}x (CPU {_median([x.cpu for x in results['tools']]):.0f}"
            f" / {_median([x.cpu for x in results['claude']]):.0f} ms)"
        )


PROFILED = "from agent_cli.cli import main; main()"


LISTED = (
    "import atexit, sys\n"
    "out = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
    "from agent_cli.cli import main; main(sys.argv[1:])"
)


def modules_report(root: Path, list_all: bool) -> None:
    """Count (and optionally list) the modules in ``sys.modules`` when ``nerve -p hi`` exits."""
    _project(root)
    server = TimedServer(scenario_text())
    server.start()
    out = root / "modules.txt"
    try:
        subprocess.run(
            [sys.executable, "-c", LISTED, str(out), "-p", "hi"],
            cwd=root / "project",
            env={**_env(root / "modules", server.base_url), "PYTHONPATH": str(ROOT)},
            capture_output=True,
            timeout=120,
            check=True,
        )
    finally:
        server.stop()
    names = out.read_text().split()
    packages: dict[str, int] = {}
    for name in names:
        top = name.split(".")[0]
        packages[top] = packages.get(top, 0) + 1
    big = sorted(((v, k) for k, v in packages.items() if v > 2), reverse=True)
    rest = sum(v for v in packages.values() if v <= 2)
    present = [m for m in FORBIDDEN if m in names]
    print(f"\nModules loaded by `nerve -p hi` (sys.modules at exit): {len(names)}")
    print("  " + ", ".join(f"{k} {v}" for v, k in big) + f", {rest} others")
    print(f"  {', '.join(FORBIDDEN)}: {'PRESENT: ' + ', '.join(present) if present else 'none'}")
    if list_all:
        print("  " + "\n  ".join(names))


def import_profile(root: Path, top: int = 15, list_all: bool = False) -> None:
    """``python -X importtime`` of case (a); the costliest imports, cumulative and self."""
    project = _project(root)
    server = TimedServer(scenario_text())
    server.start()
    try:
        env = _env(root / "profile", server.base_url)
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", PROFILED, "-p", "hi"],
            cwd=project,
            env={**env, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.stop()
    rows: list[tuple[int, int, str]] = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        try:
            _, rest = line.split(":", 1)
            self_text, cum_text, name = rest.split("|", 2)
            # One space after the bar, then two more per nesting level.
            rows.append((int(self_text), int(cum_text), name[1:]))
        except ValueError:
            continue
    if not rows:
        print(f"import profile: no data (exit {proc.returncode}): {proc.stderr[-500:]}")
        return
    modules_report(root, list_all)
    top_level = [r for r in rows if not r[2].startswith(" ")]
    total = sum(r[1] for r in top_level)
    print(
        f"\nImport-time profile of `nerve -p hi` (total of top-level imports {total / 1000:.0f} ms)"
    )
    print(f"{'cumulative ms':>14}  top-level import")
    for _, cum, name in sorted(top_level, key=lambda r: -r[1])[:top]:
        print(f"{cum / 1000:>14.1f}  {name.strip()}")
    print(f"\n{'self ms':>14}  module (any depth)")
    for self_us, _, name in sorted(rows, key=lambda r: -r[0])[:top]:
        print(f"{self_us / 1000:>14.1f}  {name.strip()}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--modules", action="store_true", help="list every module imported")
    parser.add_argument(
        "--claude",
        nargs="?",
        const="",
        default=None,
        metavar="BINARY",
        help="also run Claude Code on case (b) (default binary: the Agent SDK's)",
    )
    args = parser.parse_args(argv)
    claude = (args.claude or bundled_claude()) if args.claude is not None else None
    if args.claude is not None and claude is None:
        parser.error("no Claude Code binary: name one, or install claude-agent-sdk")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"nerve end to end, median of {args.rounds} (after one warm-up run each)")
    print(f"{os.cpu_count()} CPUs, load average {load} (a busy machine inflates every row)\n")
    with tempfile.TemporaryDirectory(prefix="nerve-bench-") as tmp:
        root = Path(tmp)
        results: dict[str, list[Sample]] = {}
        for name in CASES:
            if name == "tools" and claude is not None:
                results.update(bench_tools_and_claude(root / name, args.rounds, claude))
            else:
                results[name] = bench_case(name, root / name, args.rounds)
        _table(results)
        if not args.no_profile:
            import_profile(root / "profile", list_all=args.modules)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
