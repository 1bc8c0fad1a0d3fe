"""Workspace trust at the settings level: what an untrusted project may and may not set.

A cloned repository's committed settings must not grant themselves anything (reference §1.3).
Until the user trusts the folder, the project layer (and a local layer a repository could have
shipped, see :func:`local_file_is_users`) contributes only what restricts: ``permissions.deny``,
``permissions.ask``, ``disableBypassPermissionsMode`` / ``disableAutoMode`` and
``disabledMcpjsonServers``, plus the harmless ``model`` and ``$schema``. Everything else is
withheld, by an allowlist rather than a denylist, so a key we do not know yet (``statusLine``,
``apiKeyHelper``, ``otelHeadersHelper`` ... several run commands) fails closed.

Whether the folder is trusted is the caller's business (``agent_cli.session.trust`` keeps the store);
this module only filters and describes what it filtered.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from config.safe_git import safe_git_argv

__all__ = [
    "KEPT_KEYS",
    "KEPT_PERMISSION_KEYS",
    "TRUST_HINT",
    "Withheld",
    "local_file_is_users",
    "split_untrusted",
]

# Top-level keys an untrusted layer keeps: each only restricts or is inert.
KEPT_KEYS: Final[frozenset[str]] = frozenset({"$schema", "model", "disabledMcpjsonServers"})
KEPT_PERMISSION_KEYS: Final[frozenset[str]] = frozenset(
    {"deny", "ask", "disableBypassPermissionsMode", "disableAutoMode"}
)
TRUST_HINT: Final[str] = (
    "run nerve in this folder and answer the trust prompt, or set NERVE_TRUST_ALL=1"
)
_MAX_NAMES = 5
_GIT_TIMEOUT_S = 5.0


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _names(values: list[str]) -> str:
    shown = values[:_MAX_NAMES]
    more = len(values) - len(shown)
    return ", ".join(shown) + (f", +{more} more" if more > 0 else "")


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == {} or value == ""


@dataclass(frozen=True, slots=True)
class Withheld:
    """What untrusted settings files set but Nerve did not apply, for one warning line.

    ``root`` is the project root whose trust would apply them; ``files`` are the files' labels.
    """

    root: Path
    files: tuple[str, ...] = ()
    allow: int = 0
    modes: tuple[str, ...] = ()
    directories: int = 0
    env: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    other: tuple[str, ...] = ()

    def items(self) -> list[str]:
        """Human labels, most dangerous first: ``["3 allow rules", "hooks (SessionStart)"]``."""
        out: list[str] = []
        if self.allow:
            out.append(_plural(self.allow, "allow rule"))
        if self.modes:
            out.append(f"defaultMode {_names(list(self.modes))}")
        if self.directories:
            out.append(_plural(self.directories, "additional directory", "additional directories"))
        if self.hooks:
            out.append(f"hooks ({_names(list(self.hooks))})")
        if self.env:
            out.append(f"env ({_names(list(self.env))})")
        out.extend(self.other)
        return out

    def message(self) -> str:
        """The one warning line: what was not applied, from where, and how to trust."""
        return (
            f"Project settings not applied until you trust this folder ({self.root}): "
            f"{', '.join(self.items())} (from {', '.join(self.files)}); {TRUST_HINT}"
        )

    def merged_with(self, label: str, dropped: dict[str, Any]) -> Withheld:
        """This record plus what :func:`split_untrusted` dropped from the file ``label``."""
        perms = dropped.get("permissions") or {}
        allow = perms.get("allow")
        dirs = perms.get("additionalDirectories")
        mode = perms.get("defaultMode")
        env = dropped.get("env")
        hooks = dropped.get("hooks")
        other = [k for k in dropped if k not in ("permissions", "env", "hooks")]
        other += [f"permissions.{k}" for k in perms if k not in _DESCRIBED_PERMISSION_KEYS]
        return Withheld(
            root=self.root,
            files=_union(self.files, [label]),
            allow=self.allow + (len(allow) if isinstance(allow, list) else 0),
            modes=_union(self.modes, [str(mode)] if mode is not None else []),
            directories=self.directories + (len(dirs) if isinstance(dirs, list) else 0),
            env=_union(self.env, sorted(env) if isinstance(env, dict) else []),
            hooks=_union(self.hooks, list(hooks) if isinstance(hooks, dict) else []),
            other=_union(self.other, other),
        )


_DESCRIBED_PERMISSION_KEYS: Final[frozenset[str]] = frozenset(
    {"allow", "additionalDirectories", "defaultMode"}
)


def _union(a: tuple[str, ...], b: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*a, *b]))


def split_untrusted(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(kept, dropped)``: what an untrusted layer may contribute, and the rest.

    Empty values (``[]``, ``{}``, ``null``) are in neither: dropping them withholds nothing.
    """
    kept: dict[str, Any] = {}
    dropped: dict[str, Any] = {}
    for key, value in data.items():
        if key in KEPT_KEYS:
            kept[key] = value
        elif key == "permissions" and isinstance(value, dict):
            perms_kept = {k: v for k, v in value.items() if k in KEPT_PERMISSION_KEYS}
            perms_dropped = {
                k: v for k, v in value.items() if k not in KEPT_PERMISSION_KEYS and not _empty(v)
            }
            if perms_kept:
                kept["permissions"] = perms_kept
            if perms_dropped:
                dropped["permissions"] = perms_dropped
        elif not _empty(value):
            dropped[key] = value
    return kept, dropped


def local_file_is_users(path: Path, root: Path) -> bool:
    """Whether a ``settings.local.json`` is the user's own rather than shipped with the code.

    Nerve writes "don't ask again" rules there, so in a git work tree an *untracked* file is the
    user's. A tracked one came with the repository, and outside a work tree (a downloaded
    archive) nobody can tell: both count as project files (fail closed). Git runs without the
    repository's fsmonitor, hooks or implicit bare repositories (a checked-out ``.git/config``
    could name any command: ``config.safe_git``) and without optional index locks.
    """
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return False
    if rel.startswith(".."):
        return False
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        proc = subprocess.run(
            safe_git_argv("ls-files", "-z", "--", rel, cwd=root),
            capture_output=True,
            env=env,
            timeout=_GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and not proc.stdout.strip(b"\0")
