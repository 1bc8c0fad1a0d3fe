"""Where user and project customizations live: config dirs and the project's folders.

User level: ``<claude config dir>/<kind>`` then ``<nerve config dir>/<kind>`` (``~/.claude`` and
``~/.nerve`` unless ``CLAUDE_CONFIG_DIR`` / ``NERVE_CONFIG_DIR`` say otherwise). Project level:
``.claude/<kind>`` then ``.nerve/<kind>`` in every directory from the project root (the git
repository holding the cwd, else the cwd) down to the cwd, so Nerve started in ``src/`` finds
the repository's agents and commands. Later folders win a name: the project over the user, a
deeper directory over the root, ``.nerve`` over ``.claude`` at one level.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from config import find_project_root
from tools.records import datarecord

__all__ = ["Folder", "config_dirs", "customization_folders", "project_chain"]


@datarecord(frozen=True, slots=True)
class Folder:
    """One folder that may hold customizations, and whether it is the user's or the project's."""

    path: Path
    level: str  # "user" | "project"
    base: Path  # the directory the folder's ``.claude``/``.nerve`` sits in (home for user)


def config_dirs(home: Path) -> tuple[Path, Path]:
    """``(nerve config dir, claude config dir)``."""
    nerve = Path(os.environ.get("NERVE_CONFIG_DIR") or home / ".nerve")
    claude = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    return nerve, claude


def project_chain(cwd: Path) -> list[Path]:
    """The directories from the project root down to ``cwd`` (root first)."""
    cwd = Path(os.path.abspath(cwd))
    root = find_project_root(cwd)
    chain = [cwd]
    for parent in cwd.parents:
        if not parent.is_relative_to(root):
            break
        chain.append(parent)
    return list(reversed(chain))


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def customization_folders(
    kind: str, cwd: Path, home: Path | None = None, *, sources: Collection[str] | None = None
) -> list[Folder]:
    """Every folder that may hold ``kind`` (``agents``, ``commands``, ``skills``, ``rules``),
    lowest precedence first (module docstring). ``sources`` (``--setting-sources``): only the
    levels named there (``user``, ``project``); None = both."""
    folders = _all_folders(kind, cwd, home if home is not None else Path.home())
    return folders if sources is None else [f for f in folders if f.level in sources]


def _all_folders(kind: str, cwd: Path, home: Path) -> list[Folder]:
    nerve, claude = config_dirs(home)
    folders = [Folder(claude / kind, "user", home), Folder(nerve / kind, "user", home)]
    user_paths = [f.path for f in folders]
    for directory in project_chain(cwd):
        for name in (".claude", ".nerve"):
            path = directory / name / kind
            if any(_same(path, u) for u in user_paths):
                continue  # the home directory's .claude is the user's, counted once
            folders.append(Folder(path, "project", directory))
    return folders
