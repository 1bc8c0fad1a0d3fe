"""Prompt history per project, kept across sessions.

One JSONL file (``history.jsonl`` under ``NERVE_DATA_DIR`` or the platform user data dir), one
``{"display", "timestamp", "project"}`` record per submitted prompt, appended as written. The
file is bounded: once it holds twice ``max_entries`` lines it is rewritten (atomically) with the
newest ``max_entries``. Torn or malformed lines are skipped, never fatal: losing history must
never stop the app.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tools.records import datarecord

__all__ = ["HistoryEntry", "PromptHistory", "default_history_path"]

MAX_ENTRIES = 1000
MAX_PROMPT_CHARS = 20_000  # a pasted log is not worth keeping in full


def default_history_path() -> Path:
    """``$NERVE_DATA_DIR/history.jsonl``, else the platform user data dir's."""
    base = os.environ.get("NERVE_DATA_DIR")
    if base:
        return Path(base) / "history.jsonl"
    import platformdirs

    return Path(platformdirs.user_data_dir("nerve")) / "history.jsonl"


@datarecord(frozen=True, slots=True)
class HistoryEntry:
    """One submitted prompt."""

    display: str
    timestamp: int  # ms since the epoch
    project: str


class PromptHistory:
    """Read and append the prompt history of one project.

    ``entries()`` is newest first, with consecutive duplicates folded, so Up walks back in time
    without stepping through the same prompt twice in a row.
    """

    def __init__(
        self, project: str | Path, path: Path | None = None, *, max_entries: int = MAX_ENTRIES
    ) -> None:
        self.project = str(project)
        self.path = path if path is not None else default_history_path()
        self.max_entries = max_entries
        self._cache: list[str] | None = None

    def _read_all(self) -> list[HistoryEntry]:
        try:
            raw = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        out: list[HistoryEntry] = []
        for line in raw.splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # a torn last line or a hand edit
            if not isinstance(obj, dict):
                continue
            display, ts, project = obj.get("display"), obj.get("timestamp"), obj.get("project")
            if isinstance(display, str) and isinstance(project, str):
                out.append(HistoryEntry(display, ts if isinstance(ts, int) else 0, project))
        return out

    def entries(self) -> list[str]:
        """Prompts of this project, newest first, consecutive duplicates folded."""
        if self._cache is None:
            result: list[str] = []
            for entry in reversed(self._read_all()):
                if entry.project != self.project:
                    continue
                if result and result[-1] == entry.display:
                    continue
                result.append(entry.display)
            self._cache = result[: self.max_entries]
        return list(self._cache)

    def append(self, prompt: str) -> None:
        """Record a submitted prompt (blank prompts are not recorded)."""
        if not prompt.strip():
            return
        display = prompt[:MAX_PROMPT_CHARS]
        record = {
            "display": display,
            "timestamp": int(time.time() * 1000),
            "project": self.project,
        }
        if self._cache is not None and (not self._cache or self._cache[0] != display):
            self._cache.insert(0, display)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._maybe_compact()
        except OSError:
            return  # history is a convenience; a read-only home must not break the prompt

    def _maybe_compact(self) -> None:
        try:
            with self.path.open("rb") as fh:
                lines = sum(1 for _ in fh)
        except OSError:
            return
        if lines <= 2 * self.max_entries:
            return
        keep = self._read_all()[-self.max_entries :]
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        with tmp.open("w", encoding="utf-8") as fh:
            for e in keep:
                rec = {"display": e.display, "timestamp": e.timestamp, "project": e.project}
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        os.replace(tmp, self.path)
