"""What the OS sandbox costs a Bash command, and a 20-command session.

Run: ``.venv/bin/python bench/sandbox.py [RUNS]``. Prints a table; nothing asserts.

* added wall time of ``Bash(true)`` in the sandbox over the same call outside it (median of
  per-round differences over RUNS rounds, default 40; the two run interleaved so machine load
  hits both alike; target < 15 ms);
* the parts of a sandboxed run: bubblewrap alone (``bwrap ... bash -c true`` with Nerve's
  mount plan, no proxy, spawned and awaited directly), and Nerve's own work around it;
* the minimum of the rounds beside the median: on a shared machine the load moves the median
  several-fold, the minimum much less;
* a 20-command session (ls, cat, grep, git, python, file writes, ...) in and out of the
  sandbox, median of 5 sessions each.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
WARMUP = 5
SESSIONS = 5
TARGET_ADDED_MS = 15.0

SESSION = [
    "ls -la",
    "cat README.md",
    "grep -rn needle src || true",
    "git status --short",
    "git log --oneline -3 || true",
    "wc -l src/*.py",
    "python3 -c 'print(6 * 7)'",
    "mkdir -p build && echo built > build/out.txt",
    "cat build/out.txt",
    "find . -name '*.py' | head",
    "echo $TMPDIR && touch $TMPDIR/scratch",
    "sort src/a.py | uniq -c | head -3",
    "head -5 src/b.py",
    "date +%s",
    "env | wc -l",
    "seq 1 1000 | tail -1",
    "test -f README.md && echo yes",
    "rm -f build/out.txt",
    "du -sh . 2>/dev/null | cut -f1",
    "true",
]


def _project(tmp: Path) -> Path:
    proj = tmp / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "README.md").write_text("# bench\n" * 50)
    for name in ("a.py", "b.py"):
        (proj / "src" / name).write_text("import os\nneedle = 1\n" * 100)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    return proj


async def _time_ms(fn: Callable[[], Awaitable[object]]) -> float:
    t0 = time.perf_counter()
    await fn()
    return (time.perf_counter() - t0) * 1000


async def _measure(proj: Path) -> None:
    from permissions.types import PermissionContext
    from tools.builtin.bash import BASH_TOOL, BashInput
    from tools.context import ToolOptions, ToolServices, ToolUseContext
    from tools.sandbox import SandboxConfig, SandboxSession
    from tools.sandbox.proxy import DomainGate

    sandbox = SandboxSession(SandboxConfig(enabled=True))
    if not sandbox.availability.ok:
        print(f"the sandbox cannot start here: {sandbox.availability.reason}")
        return

    def ctx(services: ToolServices) -> ToolUseContext:
        return ToolUseContext(
            permissions=PermissionContext(cwd=proj),
            options=ToolOptions(session_dir=proj.parent / "session", services=services),
        )

    plain, boxed = ctx(ToolServices()), ctx(ToolServices(sandbox=sandbox))
    inp = BashInput(command="true")

    async def call(c: ToolUseContext) -> None:
        await BASH_TOOL.call(inp, c, lambda _p: None)

    async def bwrap_only() -> None:
        run = sandbox.prepare(
            ["bash", "-c", "true"],
            cwd=proj,
            working_dirs=[proj],
            env=dict(os.environ),
            gate=DomainGate(sandbox.config),
        )
        argv = list(run.argv)
        i = argv.index("--info-fd")
        del argv[i : i + 4]  # no proxy hand-shake: bubblewrap's own cost
        proc = await asyncio.create_subprocess_exec(*argv, pass_fds=run.pass_fds)
        await proc.wait()
        await run.cleanup()

    samples: dict[str, list[float]] = {"outside": [], "sandboxed": [], "bwrap only": []}
    for i in range(WARMUP + RUNS):
        for name, fn in (
            ("outside", lambda: call(plain)),
            ("sandboxed", lambda: call(boxed)),
            ("bwrap only", bwrap_only),
        ):
            ms = await _time_ms(fn)
            if i >= WARMUP:
                samples[name].append(ms)
    base = samples["outside"]
    print(
        f"{'Bash(true), ' + str(RUNS) + ' rounds':<32} {'median':>8} {'added':>8} {'min':>8} {'added':>8}"
    )
    print("-" * 68)
    for name, values in samples.items():
        added = statistics.median(v - b for v, b in zip(values, base, strict=True))
        low = min(values) - min(base)
        shown = "" if name == "outside" else f"{added:>8.2f}"
        low_shown = "" if name == "outside" else f"{low:>8.2f}"
        print(
            f"{name:<32} {statistics.median(values):>8.2f} {shown:>8} {min(values):>8.2f} {low_shown:>8}"
        )
    print(f"(target: added wall time per sandboxed command < {TARGET_ADDED_MS:g} ms)")
    print()

    async def session(c: ToolUseContext) -> None:
        for command in SESSION:
            await BASH_TOOL.call(BashInput(command=command), c, lambda _p: None)

    totals: dict[str, list[float]] = {"outside": [], "sandboxed": []}
    for _ in range(SESSIONS):
        totals["outside"].append(await _time_ms(lambda: session(plain)))
        totals["sandboxed"].append(await _time_ms(lambda: session(boxed)))
    print(f"{'20-command session, median of ' + str(SESSIONS):<44} {'ms':>8} {'per cmd':>10}")
    print("-" * 64)
    for name, values in totals.items():
        med = statistics.median(values)
        print(f"{name:<44} {med:>8.1f} {med / len(SESSION):>10.2f}")
    added = statistics.median(totals["sandboxed"]) - statistics.median(totals["outside"])
    print(f"{'added by the sandbox':<44} {added:>8.1f} {added / len(SESSION):>10.2f}")
    await sandbox.close()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="nerve-bench-sandbox-") as tmp:
        asyncio.run(_measure(_project(Path(tmp))))


if __name__ == "__main__":
    main()
