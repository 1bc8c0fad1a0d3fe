"""Memory files: AGENTS.md and CLAUDE.md / CLAUDE.local.md, user level then root down to the cwd.

* User level: ``<nerve config dir>/AGENTS.md``, ``<nerve config dir>/CLAUDE.md`` and
  ``<claude config dir>/CLAUDE.md`` (``~/.nerve`` and ``~/.claude`` unless ``NERVE_CONFIG_DIR``
  / ``CLAUDE_CONFIG_DIR`` say otherwise).
* Project: for every directory from the filesystem root down to the cwd: ``AGENTS.md``,
  ``CLAUDE.md``, ``.claude/CLAUDE.md``, then ``CLAUDE.local.md``.
* ``@path`` imports (relative to the importing file, ``~/`` or absolute) are followed up to
  ``MAX_IMPORT_DEPTH`` hops; they are ignored inside code spans and fenced blocks.
* No file is loaded twice: files are keyed by their real path, so a ``CLAUDE.md`` that imports or
  symlinks ``AGENTS.md`` does not double it.
* Block-level HTML comments are stripped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_IMPORT_DEPTH", "MemoryFile", "load_memory_files", "render_memory"]

MAX_IMPORT_DEPTH = 4
MAX_FILE_BYTES = 256 * 1024
_IMPORT_RE = re.compile(r"(?<![\w`])@((?:~/|/|\./|\.\./)?[\w.\-/]+)")
_HTML_COMMENT_RE = re.compile(r"^\s*<!--.*?-->\s*$\n?", re.S | re.M)
_FENCE_RE = re.compile(r"^(```|~~~)")


@dataclass(frozen=True, slots=True)
class MemoryFile:
    path: Path
    content: str
    level: str  # "user" | "project" | "local" | "import"
    imported_from: Path | None = None


def _config_dirs(home: Path) -> tuple[Path, Path]:
    nerve = Path(os.environ.get("NERVE_CONFIG_DIR") or home / ".nerve")
    claude = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    return nerve, claude


def _read(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    text = data[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_BYTES:
        text += "\n[... memory file truncated ...]\n"
    return _HTML_COMMENT_RE.sub("", text)


def _imports(text: str) -> list[str]:
    """``@path`` references outside code spans and fenced code blocks."""
    found: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE_RE.match(line.lstrip()):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        # Drop inline code spans before looking for imports.
        stripped = re.sub(r"`[^`]*`", "", line)
        found.extend(m.group(1).rstrip(".,;:)") for m in _IMPORT_RE.finditer(stripped))
    return found


def _resolve_import(ref: str, base: Path, home: Path) -> Path:
    if ref.startswith("~/"):
        return home / ref[2:]
    p = Path(ref)
    return p if p.is_absolute() else base.parent / p


class _Loader:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.seen: set[Path] = set()
        self.files: list[MemoryFile] = []

    def load(self, path: Path, level: str, depth: int = 0, parent: Path | None = None) -> None:
        try:
            real = path.resolve()
        except OSError:
            return
        if real in self.seen:
            return
        text = _read(path)
        if text is None:
            return
        self.seen.add(real)
        self.files.append(MemoryFile(path, text, level, parent))
        if depth >= MAX_IMPORT_DEPTH:
            return
        for ref in _imports(text):
            self.load(_resolve_import(ref, path, self.home), "import", depth + 1, path)


def load_memory_files(cwd: Path, *, home: Path | None = None) -> list[MemoryFile]:
    """Every memory file that applies to ``cwd``, broad to specific, each at most once."""
    home = home or Path.home()
    loader = _Loader(home)
    nerve_dir, claude_dir = _config_dirs(home)
    for p in (nerve_dir / "AGENTS.md", nerve_dir / "CLAUDE.md", claude_dir / "CLAUDE.md"):
        loader.load(p, "user")
    cwd = cwd.resolve()
    for d in (*reversed(cwd.parents), cwd):
        for name in ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md"):
            loader.load(d / name, "project")
        loader.load(d / "CLAUDE.local.md", "local")
    return loader.files


def render_memory(files: list[MemoryFile]) -> str:
    """The memory section of the system prompt."""
    if not files:
        return ""
    parts = [
        "Instructions from memory files follow. They are the user's and the project's "
        "standing instructions; follow them."
    ]
    for f in files:
        label = {
            "user": "user's private global instructions",
            "local": "user's private project instructions",
            "import": f"imported from {f.imported_from}",
        }.get(f.level, "project instructions, checked into the codebase")
        parts.append(f"Contents of {f.path} ({label}):\n\n{f.content.strip()}")
    return "\n\n".join(parts)
