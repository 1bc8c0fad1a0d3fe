"""What a Bash command changed in the working directories, found by comparing two stat scans.

``scan`` lists regular files under the roots with their mtime and size, bounded: it skips
dependency, build and cache trees (``SKIP_DIRS``, plain names and ``*.ext`` patterns from the
root's ``.gitignore``), does not follow symlinks, and stops after ``MAX_FILES`` files (the scan
says it is incomplete; changes beyond it are missed).

Restoring a file Bash changed needs its content from before the command. ``PreimageCache`` keeps
the content of small files in memory, keyed by (path, mtime, size), so each scan reads only files
that are new or changed since the previous one; it is bounded in bytes and in what one scan may
read. A file it could not keep is still detected as changed, but cannot be restored.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import field
from pathlib import Path

from tools.records import datarecord

__all__ = [
    "MAX_FILES",
    "SKIP_DIRS",
    "PreimageCache",
    "Scan",
    "diff_scans",
    "scan",
]

MAX_FILES = 20_000
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        ".sl",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".cache",
        ".next",
        ".gradle",
        ".terraform",
        "site-packages",
        "dist",
        "build",
        "target",
    }
)
_GLOB_CHARS = frozenset("*?[")

Stat = tuple[int, int]  # (mtime_ns, size)


@datarecord
class Scan:
    """Regular files found (absolute path -> (mtime_ns, size)) and whether the scan finished."""

    files: dict[str, Stat] = field(default_factory=dict)
    complete: bool = True


def _ignore_rules(root: Path) -> tuple[set[str], list[str]]:
    """Names and basename patterns from ``root/.gitignore`` (anchored and negated rules are
    left out: they only make the scan look at more)."""
    names: set[str] = set()
    patterns: list[str] = []
    try:
        text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return names, patterns
    for raw in text.splitlines()[:500]:
        line = raw.strip().rstrip("/")
        if not line or line.startswith(("#", "!")) or "/" in line:
            continue
        if _GLOB_CHARS & set(line):
            patterns.append(line)
        else:
            names.add(line)
    return names, patterns


def scan(roots: Sequence[Path], max_files: int = MAX_FILES) -> Scan:
    """Stat every regular file under ``roots`` (see module docstring); never raises."""
    out = Scan()
    seen_roots: set[str] = set()
    for root in roots:
        top = os.path.realpath(root)
        if top in seen_roots or not os.path.isdir(top):
            continue
        seen_roots.add(top)
        names, patterns = _ignore_rules(Path(top))
        stack = [top]
        while stack:
            directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name in names or any(fnmatch.fnmatchcase(name, p) for p in patterns):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if name not in SKIP_DIRS and not os.path.exists(
                        os.path.join(entry.path, "pyvenv.cfg")
                    ):
                        stack.append(entry.path)
                elif stat.S_ISREG(st.st_mode):
                    if len(out.files) >= max_files:
                        out.complete = False
                        return out
                    out.files[entry.path] = (st.st_mtime_ns, st.st_size)
    return out


def diff_scans(before: Scan, after: Scan) -> tuple[list[str], list[str], list[str]]:
    """(created, changed, deleted) paths between two scans. A path beyond an incomplete scan
    is not reported as created or deleted: it may just not have been reached."""
    created = [p for p in after.files if p not in before.files and before.complete]
    changed = [p for p, st in after.files.items() if p in before.files and before.files[p] != st]
    deleted = [p for p in before.files if p not in after.files and after.complete]
    return sorted(created), sorted(changed), sorted(deleted)


class PreimageCache:
    """Contents of small files, by (path, mtime_ns, size); least recently seen evicted first."""

    def __init__(
        self,
        max_bytes: int = 32 * 1024 * 1024,
        max_file: int = 1024 * 1024,
        read_per_fill: int = 16 * 1024 * 1024,
    ) -> None:
        self.max_bytes = max_bytes
        self.max_file = max_file
        self.read_per_fill = read_per_fill
        self._entries: OrderedDict[tuple[str, int, int], bytes] = OrderedDict()
        self._bytes = 0

    def fill(self, files: dict[str, Stat]) -> None:
        """Keep the content of every small file of a scan that is not kept yet (bounded)."""
        budget = self.read_per_fill
        for path, (mtime_ns, size) in files.items():
            key = (path, mtime_ns, size)
            if key in self._entries:
                self._entries.move_to_end(key)
                continue
            if size > self.max_file or size > budget:
                continue
            try:
                with open(path, "rb") as fh:
                    data = fh.read(self.max_file + 1)
            except OSError:
                continue
            if len(data) != size:
                continue  # changing under us: its content at this moment is unknown
            budget -= size
            self._entries[key] = data
            self._bytes += size
        while self._bytes > self.max_bytes and self._entries:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= len(dropped)

    def get(self, path: str, st: Stat) -> bytes | None:
        return self._entries.get((path, st[0], st[1]))

    def forget(self, paths: Iterable[str]) -> None:
        gone = set(paths)
        for key in [k for k in self._entries if k[0] in gone]:
            self._bytes -= len(self._entries.pop(key))
