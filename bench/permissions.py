"""Permission engine speed: decisions per second over the public corpus, and one decision.

Run: ``.venv/bin/python bench/permissions.py``. Prints medians (target: one typical compound
decision < 100 µs). Nothing here asserts; speed lives in numbers, not in tests.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from permissions.types import PermissionContext, PermissionRequest

ROOT = Path(__file__).resolve().parents[1]


def _clear_parse_cache() -> None:
    """Forget cached bash parses, so a measurement includes parsing (a new command)."""
    import permissions.bash as bash

    clear = getattr(getattr(bash, "parse_simple_commands", None), "cache_clear", None)
    if clear is not None:
        clear()


CORPUS = ROOT / "tests" / "data" / "bash-permissions-public.jsonl"
PASSES = 5
TARGET_US = 100.0


def _request(command: str) -> PermissionRequest:
    from permissions.types import PermissionRequest, ToolKind

    return PermissionRequest("Bash", {"command": command}, ToolKind.BASH, command=command)


def _context(case: dict[str, list[str]], cwd: Path) -> PermissionContext:
    from permissions.rules import make_rule
    from permissions.types import PermissionContext, RuleSource

    rules = [
        make_rule(text, behavior, RuleSource.CLI, cwd)
        for behavior in ("deny", "ask", "allow")
        for text in case.get(behavior, [])
    ]
    return PermissionContext(rules=tuple(rules), cwd=cwd)


def corpus_rate(cwd: Path, cold: bool) -> tuple[float, int]:
    """Median decisions/second over the corpus (contexts built outside the timed loop).

    ``cold``: the bash parse cache is cleared before each pass (every command parsed anew).
    """
    from permissions.engine import decide

    cases = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    prepared = [(_request(c["command"]), _context(c, cwd)) for c in cases]
    rates = []
    for _ in range(PASSES):
        if cold:
            _clear_parse_cache()
        start = time.perf_counter()
        for request, ctx in prepared:
            decide(request, ctx)
        rates.append(len(prepared) / (time.perf_counter() - start))
    return statistics.median(rates), len(prepared)


def one_decision_us(command: str, ctx: PermissionContext, cold: bool, repeats: int = 2000) -> float:
    """Median time of one decision, in microseconds (after a warm-up).

    ``cold``: the parse cache is cleared before each decision (a command never seen before);
    otherwise the parse is cached, as when the pipeline asks about the same call again.
    """
    from permissions.engine import decide

    request = _request(command)
    for _ in range(50):
        decide(request, ctx)
    times = []
    for _ in range(repeats):
        if cold:
            _clear_parse_cache()
        start = time.perf_counter()
        decide(request, ctx)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> int:
    from permissions.engine import decide
    from permissions.types import PermissionContext

    cwd = Path.cwd()
    t0 = time.perf_counter()
    decide(_request("true"), PermissionContext(cwd=cwd))  # first call loads tree-sitter
    warm_ms = (time.perf_counter() - t0) * 1e3
    rate, n = corpus_rate(cwd, cold=True)
    warm_rate, _ = corpus_rate(cwd, cold=False)
    rules = {
        "allow": ["Bash(git diff:*)", "Bash(npm run test)", "Bash(cd:*)"],
        "deny": ["Bash(rm:*)", "Bash(curl:*)"],
        "ask": ["Bash(git push *)"],
    }
    ctx = _context(rules, cwd)
    typical = [
        "cd /repo && git diff --stat HEAD~1 | grep -v test > /tmp/o.txt",
        "git status && npm run test",
    ]
    rows = [
        (f"corpus ({n} commands), median of {PASSES} passes", f"{rate:,.0f} decisions/s"),
        ("corpus, bash parses cached", f"{warm_rate:,.0f} decisions/s"),
    ]
    rows.append(("first decision (imports tree-sitter)", f"{warm_ms:.1f} ms"))
    for command in typical:
        for cold in (True, False):
            us = one_decision_us(command, ctx, cold)
            verdict = "ok" if us < TARGET_US else f"over the {TARGET_US:.0f} µs target"
            label = "new command" if cold else "parse cached"
            rows.append((f"one decision ({label}): {command}", f"{us:.1f} µs median ({verdict})"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  result")
    print(f"{'-' * width}  {'-' * 30}")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    return 0


if __name__ == "__main__":
    # Run as a script, this file's directory comes first on sys.path and its own name would
    # shadow the `permissions` package: put the repository root there instead.
    sys.path[:] = [str(ROOT)] + [
        p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent
    ]
    raise SystemExit(main())
