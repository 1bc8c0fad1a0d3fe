"""The folder-trust store: which project roots the user has trusted.

A cloned repository's settings must not grant themselves permissions or run code
(``config.trust`` says what an untrusted project may still set). The store is one JSON file,
``<NERVE_DATA_DIR or the platform user data dir>/trusted-projects.json``::

    {"version": 1, "projects": {"/home/me/src/app": {"trusted": true, "at": "2026-...Z"}}}

Rules:

* A project root is the git repository root (``config.find_project_root``), keyed by its real
  path (symlinks resolved), so one checkout reached two ways is one entry.
* Trusting a directory trusts everything below it, except that an entry for the home directory
  or ``/`` trusts only that exact directory: "trust my home" must not mean "trust every
  repository I ever clone into it".
* ``NERVE_TRUST_ALL=1`` trusts every folder (for CI and containers that run only code they
  chose). A trust given this run is also kept in memory, so a store that cannot be written
  (read-only data dir) still trusts the folder for the rest of the process.
* Writes are atomic (a temporary file in the same directory, then ``os.replace``) and re-read
  the file first, so other entries are kept. Two Nerves writing in the same instant may lose
  one entry; that folder is simply asked about again.
* A missing, unreadable or malformed store trusts nothing and never stops start-up.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from tools.records import datarecord

__all__ = [
    "STORE_NAME",
    "TRUST_ALL_ENV",
    "TrustError",
    "TrustQuestion",
    "TrustStore",
    "default_store_path",
    "is_trusted",
    "mark_trusted",
    "trust_question",
]

STORE_NAME: Final[str] = "trusted-projects.json"
TRUST_ALL_ENV: Final[str] = "NERVE_TRUST_ALL"
_TRUE: Final[frozenset[str]] = frozenset({"1", "true", "yes", "on"})

_session_trusted: set[str] = set()
_session_lock = threading.Lock()


class TrustError(OSError):
    """The store could not be written (the folder is still trusted for this process)."""


def default_store_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$NERVE_DATA_DIR/trusted-projects.json``, else the platform user data dir's."""
    env = os.environ if environ is None else environ
    base = env.get("NERVE_DATA_DIR")
    if base:
        return Path(base) / STORE_NAME
    import platformdirs

    return Path(platformdirs.user_data_dir("nerve")) / STORE_NAME


def _key(path: Path) -> str:
    return os.path.realpath(os.path.abspath(path))


def _never_inherited(entry: str, home: str) -> bool:
    return entry in (home, os.path.realpath("/"), "/")


@datarecord(frozen=True)
class TrustStore:
    """The trust file at ``path`` (``home`` only matters for the no-inheritance rule)."""

    path: Path
    home: Path | None = None

    def entries(self) -> dict[str, dict[str, Any]]:
        """The trusted roots (only entries with ``"trusted": true``); ``{}`` if unreadable."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        projects = raw.get("projects") if isinstance(raw, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {
            str(k): v
            for k, v in projects.items()
            if isinstance(v, dict) and v.get("trusted") is True and os.path.isabs(str(k))
        }

    def covers(self, root: Path) -> bool:
        """Whether ``root`` or a directory above it is trusted (see the module's rules)."""
        target = _key(root)
        home = _key(self.home if self.home is not None else Path.home())
        for entry in self.entries():
            base = _key(Path(entry))
            if target == base:
                return True
            if _never_inherited(base, home):
                continue
            if target.startswith(base.rstrip(os.sep) + os.sep):
                return True
        return False

    def trust(self, root: Path) -> None:
        """Record ``root`` as trusted, atomically; raises :class:`TrustError` if it cannot."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            raw = {}
        projects = raw.get("projects") if isinstance(raw, dict) else None
        if not isinstance(projects, dict):
            projects = {}
        at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        projects[_key(root)] = {"trusted": True, "at": at}
        text = json.dumps({"version": 1, "projects": projects}, indent=2, sort_keys=True) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{STORE_NAME}.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise TrustError(f"cannot save folder trust to {self.path}: {reason}") from exc


def is_trusted(
    root: Path, *, environ: Mapping[str, str] | None = None, store: TrustStore | None = None
) -> bool:
    """Whether the project at ``root`` is trusted: ``NERVE_TRUST_ALL``, this run, or the store."""
    env = os.environ if environ is None else environ
    if env.get(TRUST_ALL_ENV, "").strip().lower() in _TRUE:
        return True
    key = _key(root)
    with _session_lock:
        if key in _session_trusted:
            return True
    return (store or TrustStore(default_store_path(env))).covers(root)


def mark_trusted(
    root: Path, *, environ: Mapping[str, str] | None = None, store: TrustStore | None = None
) -> None:
    """Trust ``root`` for this process and in the store; :class:`TrustError` if not saved."""
    with _session_lock:
        _session_trusted.add(_key(root))
    env = os.environ if environ is None else environ
    (store or TrustStore(default_store_path(env))).trust(root)


@datarecord(frozen=True)
class TrustQuestion:
    """What the trust prompt shows: the root and what its settings would apply once trusted."""

    root: Path
    withheld: list[str]
    files: list[str]
    message: str = ""  # the warning a session built without trust gives


def trust_question(cwd: Path, cli_settings: str | None = None) -> TrustQuestion | None:
    """The question to ask before building a session in ``cwd``, or ``None`` if there is none
    (trusted already, or the project sets nothing that trust would add). Never raises: a
    problem loading settings is the session factory's to report."""
    from config import find_project_root, load_settings

    try:
        root = find_project_root(cwd)
        if is_trusted(root):
            return None
        settings = load_settings(cwd, cli_settings=cli_settings, project_trusted=False)
    except Exception:
        return None
    withheld = settings.withheld
    if withheld is None:
        return None
    return TrustQuestion(
        root=withheld.root,
        withheld=withheld.items(),
        files=list(withheld.files),
        message=withheld.message(),
    )
