"""Where settings files live: project root, user config dirs, policy dirs, display names.

Every root can be overridden (arguments or a :class:`ConfigRoots` first, then environment
variables) so tests and unusual installs never touch the real ``~`` or ``/etc``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "CLAUDE_POLICY_DIR",
    "NERVE_POLICY_DIR",
    "ConfigDirs",
    "ConfigRoots",
    "display_path",
    "expand_home",
    "find_project_root",
    "local_settings_path",
    "policy_files",
    "resolve_config_dirs",
]

NERVE_POLICY_DIR: Final[Path] = Path("/etc/nerve")
CLAUDE_POLICY_DIR: Final[Path] = Path("/etc/claude-code")
MANAGED_FILE: Final[str] = "managed-settings.json"
MANAGED_DROPINS: Final[str] = "managed-settings.d"


def find_project_root(cwd: Path) -> Path:
    """The nearest directory at or above ``cwd`` holding ``.git`` (dir or worktree file); else cwd."""
    start = Path(os.path.abspath(cwd))
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def local_settings_path(cwd: Path) -> Path:
    """Where "don't ask again" approvals go: ``<project root>/.claude/settings.local.json``,
    as Claude Code writes them (``.nerve/settings.local.json`` is still read, same layer)."""
    return find_project_root(cwd) / ".claude" / "settings.local.json"


@dataclass(frozen=True, slots=True)
class ConfigDirs:
    """The resolved roots: user config dirs and policy dirs."""

    home: Path
    nerve_user: Path
    claude_user: Path
    nerve_policy: Path
    claude_policy: Path


def expand_home(text: str, home: Path) -> str:
    """``text`` with a leading ``~`` or ``~/`` replaced by ``home`` (``~user`` is left alone)."""
    return str(home) + text[1:] if text == "~" or text.startswith("~/") else text


def _env_path(environ: Mapping[str, str], name: str, home: Path) -> Path | None:
    value = environ.get(name, "").strip()
    if not value:
        return None
    return Path(os.path.abspath(expand_home(value, home)))


def resolve_config_dirs(
    *,
    home: Path | None,
    policy_dir: Path | None,
    claude_policy_dir: Path | None,
    environ: Mapping[str, str],
) -> ConfigDirs:
    """Arguments beat environment variables, which beat the defaults.

    ``NERVE_CONFIG_DIR`` replaces ``~/.nerve``, ``CLAUDE_CONFIG_DIR`` replaces ``~/.claude``,
    ``NERVE_POLICY_DIR`` replaces ``/etc/nerve`` and ``NERVE_CLAUDE_POLICY_DIR`` replaces
    ``/etc/claude-code``.
    """
    home_dir = Path(os.path.abspath(home)) if home is not None else Path.home()
    return ConfigDirs(
        home=home_dir,
        nerve_user=_env_path(environ, "NERVE_CONFIG_DIR", home_dir) or home_dir / ".nerve",
        claude_user=_env_path(environ, "CLAUDE_CONFIG_DIR", home_dir) or home_dir / ".claude",
        nerve_policy=(
            Path(os.path.abspath(policy_dir))
            if policy_dir is not None
            else _env_path(environ, "NERVE_POLICY_DIR", home_dir) or NERVE_POLICY_DIR
        ),
        claude_policy=(
            Path(os.path.abspath(claude_policy_dir))
            if claude_policy_dir is not None
            else _env_path(environ, "NERVE_CLAUDE_POLICY_DIR", home_dir) or CLAUDE_POLICY_DIR
        ),
    )


@dataclass(frozen=True, slots=True)
class ConfigRoots:
    """Where a caller says settings live (tests, unusual installs): each None leaves the
    answer to ``environ`` (None: ``os.environ``), then to the default; see
    :func:`resolve_config_dirs`."""

    home: Path | None = None
    policy_dir: Path | None = None
    claude_policy_dir: Path | None = None
    environ: Mapping[str, str] | None = None

    def resolve(self) -> ConfigDirs:
        return resolve_config_dirs(
            home=self.home,
            policy_dir=self.policy_dir,
            claude_policy_dir=self.claude_policy_dir,
            environ=os.environ if self.environ is None else self.environ,
        )


def policy_files(policy_dir: Path) -> list[Path]:
    """``managed-settings.json`` then the drop-ins beside it, alphabetically.

    Hidden files and anything not ending in ``.json`` are skipped; missing files are not listed.
    A main file that exists but is not a regular file is listed, so reading it reports the error.
    """
    out: list[Path] = []
    main = policy_dir / MANAGED_FILE
    if main.exists():
        out.append(main)
    dropins = policy_dir / MANAGED_DROPINS
    try:
        names = sorted(os.listdir(dropins))
    except (FileNotFoundError, NotADirectoryError):
        return out
    except OSError:
        # an unreadable drop-in dir must not silently drop policy: let reading it fail loudly
        return [*out, dropins]
    for name in names:
        if name.startswith(".") or not name.endswith(".json"):
            continue
        path = dropins / name
        if not path.is_dir():
            out.append(path)
    return out


def display_path(path: Path, home: Path) -> str:
    """``path`` with the home directory shown as ``~``."""
    try:
        rel = Path(path).relative_to(home)
    except ValueError:
        return str(path)
    return "~" if str(rel) == "." else f"~/{rel}"
