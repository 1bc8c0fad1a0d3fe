"""Where ``/memory`` and ``# note`` write: the memory files a user may pick, and appending.

The choices, most shared first: the project's memory (``AGENTS.md`` at the project root, or
its ``CLAUDE.md`` when only that exists), the project's local memory (``CLAUDE.local.md``, not
checked in), then the user's (``~/.nerve/AGENTS.md``, or ``~/.claude/CLAUDE.md`` when only that
exists). ``/memory`` also offers every other memory file the session loaded.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_cli.customize.files import NotRegularFile
from agent_cli.customize.locations import config_dirs
from agent_cli.customize.memory import load_memory_files
from config import find_project_root
from tools.records import datarecord

__all__ = ["MemoryTarget", "append_note", "editable_memory_files", "memory_targets"]


@datarecord(frozen=True, slots=True)
class MemoryTarget:
    """A memory file the user may write to, with what it is for."""

    label: str
    path: Path

    def describe(self) -> str:
        state = "" if self.path.exists() else " (new)"
        return f"{self.label}: {self.path}{state}"


def _pick(preferred: Path, alternative: Path) -> Path:
    return alternative if alternative.exists() and not preferred.exists() else preferred


def memory_targets(cwd: Path, home: Path | None = None) -> list[MemoryTarget]:
    """The files a ``# note`` may go to (module docstring)."""
    home = home if home is not None else Path.home()
    root = find_project_root(cwd)
    nerve, claude = config_dirs(home)
    return [
        MemoryTarget("Project memory", _pick(root / "AGENTS.md", root / "CLAUDE.md")),
        MemoryTarget("Project memory, local (not checked in)", root / "CLAUDE.local.md"),
        MemoryTarget(
            "User memory (all projects)", _pick(nerve / "AGENTS.md", claude / "CLAUDE.md")
        ),
    ]


def editable_memory_files(cwd: Path, home: Path | None = None) -> list[MemoryTarget]:
    """``/memory``'s choices: the targets, then every other memory file in use."""
    targets = memory_targets(cwd, home)
    seen = {os.path.realpath(t.path) for t in targets}
    for f in load_memory_files(cwd, home=home):
        real = os.path.realpath(f.path)
        if real not in seen:
            seen.add(real)
            label = {"user": "User memory", "local": "Local memory", "import": "Imported"}.get(
                f.level, "Rules" if f.level.endswith("_rule") else "Project memory"
            )
            targets.append(MemoryTarget(label, f.path))
    return targets


def append_note(path: Path, note: str) -> None:
    """Append ``- note`` to the file (created with its folder if missing). Refuses anything but
    a regular file, so a FIFO planted under a memory file's name cannot block Nerve."""
    text = " ".join(note.split())
    if not text:
        raise ValueError("empty note")
    if path.exists() and not path.is_file():
        raise NotRegularFile(f"{path} is not a regular file")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{path} is not a regular file")
        size = st.st_size
        prefix = ""
        if size:
            with open(path, "rb") as fh:
                fh.seek(size - 1)
                prefix = "" if fh.read(1) == b"\n" else "\n"
        os.write(fd, f"{prefix}- {text}\n".encode())
    finally:
        os.close(fd)
