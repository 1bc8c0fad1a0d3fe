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
* Rules files without ``paths`` frontmatter (``.claude/rules/**/*.md``, user then project; see
  ``agent_cli.customize.rules``) follow the memory files of their level.
* A FIFO or a device in any of these places is refused unopened (``customize.files``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from agent_cli.customize.files import read_user_file
from agent_cli.customize.locations import config_dirs
from agent_cli.customize.rules import load_rules
from tools.records import datarecord

__all__ = ["MAX_IMPORT_DEPTH", "MemoryFile", "load_memory_files", "render_memory"]

MAX_IMPORT_DEPTH = 4
MAX_FILE_BYTES = 256 * 1024
_IMPORT_RE = re.compile(r"(?<![\w`])@((?:~/|/|\./|\.\./)?[\w.\-/]+)")
_HTML_COMMENT_RE = re.compile(r"^\s*<!--.*?-->\s*$\n?", re.S | re.M)
_FENCE_RE = re.compile(r"^(```|~~~)")


@datarecord(frozen=True, slots=True)
class MemoryFile:
    path: Path
    content: str
    level: str  # "user" | "project" | "local" | "import" | "user_rule" | "project_rule"
    imported_from: Path | None = None


def _read(path: Path) -> str | None:
    try:
        text, truncated = read_user_file(path, MAX_FILE_BYTES)
    except OSError:  # missing, unreadable, or a FIFO/device refused unopened
        return None
    if truncated:
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


def load_memory_files(
    cwd: Path,
    *,
    home: Path | None = None,
    warnings: list[str] | None = None,
    sources: Collection[str] | None = None,
) -> list[MemoryFile]:
    """Every memory file that applies to ``cwd``, broad to specific, each at most once.

    Unreadable or broken rules files are skipped; why goes to ``warnings`` when given.
    ``sources`` (``--setting-sources``, as the Agent SDK's ``settingSources``): ``user`` loads
    the user's files and rules, ``project`` the project's ``AGENTS.md``/``CLAUDE.md`` and rules,
    ``local`` the ``CLAUDE.local.md`` files; None = all three.
    """
    home = home or Path.home()
    loader = _Loader(home)
    use = {"user", "project", "local"} if sources is None else set(sources)
    nerve_dir, claude_dir = config_dirs(home)
    if "user" in use:
        for p in (nerve_dir / "AGENTS.md", nerve_dir / "CLAUDE.md", claude_dir / "CLAUDE.md"):
            loader.load(p, "user")
    rules, rule_warnings = load_rules(cwd, home, sources=use)
    if warnings is not None:
        warnings.extend(rule_warnings)
    always = [r for r in rules if not r.paths]
    _add_rules(loader, [r for r in always if r.level == "user"], "user_rule")
    cwd = cwd.resolve()
    for d in (*reversed(cwd.parents), cwd):
        if "project" in use:
            for name in ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md"):
                loader.load(d / name, "project")
        if "local" in use:
            loader.load(d / "CLAUDE.local.md", "local")
    _add_rules(loader, [r for r in always if r.level == "project"], "project_rule")
    return loader.files


def _add_rules(loader: _Loader, rules: list[Any], level: str) -> None:
    for rule in rules:
        try:
            real = rule.path.resolve()
        except OSError:
            continue
        if real not in loader.seen and rule.content.strip():
            loader.seen.add(real)
            loader.files.append(
                MemoryFile(rule.path, _HTML_COMMENT_RE.sub("", rule.content), level)
            )


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
            "user_rule": "user's rules for all projects",
            "project_rule": "project rules, checked into the codebase",
        }.get(f.level, "project instructions, checked into the codebase")
        parts.append(f"Contents of {f.path} ({label}):\n\n{f.content.strip()}")
    return "\n\n".join(parts)
