"""Bench hook: ``NERVE_BENCH_FIRST_FRAME=<file>`` makes the app record its start-up, then exit.

Used by ``bench/tui.py`` and ``tests/agent_cli/frontends/test_interactive_startup.py``; not a user feature. The app
writes ``{"t": <time.time() at the first frame>, "cpu": <the process's CPU seconds then>,
"modules": [<sys.modules then>]}`` to the file as soon as the first frame is painted, then, when
the session is ready (or failed), rewrites it with ``"ready": <time.time()>``, ``"ready_cpu"``
and ``"error": <message or null>`` added, and exits with 0
after painting one more frame (so a start-up error is on screen).
Each write replaces the file atomically, so a reader never sees half a record.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["BENCH_ENV", "FirstFrameProbe"]

BENCH_ENV = "NERVE_BENCH_FIRST_FRAME"


class FirstFrameProbe:
    """Records the first-frame time and module list, then the session-ready time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.record: dict[str, Any] = {}

    def frame(self) -> None:
        """Call right after the first frame is painted."""
        if not self.record:
            now = time.time()
            cpu = time.process_time()
            self.record = {"t": now, "cpu": cpu, "modules": sorted(sys.modules)}
            self._write()

    def ready(self, error: str | None) -> None:
        """Call when the session is ready (``error`` None) or could not be built."""
        if self.record and "ready" not in self.record:
            self.record["ready"] = time.time()
            self.record["ready_cpu"] = time.process_time()
            self.record["error"] = error
            self._write()

    def _write(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(self.record))
            os.replace(tmp, self.path)
        except OSError:  # a bench aid must never take the app down
            pass
