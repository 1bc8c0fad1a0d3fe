"""The code ``dataclasses`` compiles for each class, kept between runs of ``nerve``.

Every ``@dataclass`` writes its ``__init__``, ``__repr__``, ``__eq__`` (frozen: ``__setattr__``,
``__delattr__``, ``__hash__``) as source text and compiles it with ``exec``: ~0.4 ms a class on
the development machine, three quarters of what a dataclass costs, and ``nerve`` (Textual and
our own modules) defines ~270 of them before its session is ready. The texts are the same on
every run, so :func:`install` gives the ``dataclasses`` module an ``exec`` that looks each text
up in a dict of compiled code loaded from a file (``marshal``, one file per Python build) and
compiles only what is not there; :func:`save` writes the file back when something was added.

Only the real command installs it (``agent_cli.cli.main``), never a caller's process. A text
maps to exactly the code ``compile`` makes of it (same flags as the module's own ``exec``: no
``__future__`` features inherited), so classes are identical with or without the file. The
file is trusted as ``__pycache__`` files are: it lives in the user's own data dir.
"""

from __future__ import annotations

import marshal
import os
import sys
from types import CodeType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_ENTRIES", "cache_path", "install", "installed", "save", "stats"]

MAX_ENTRIES = 20_000  # a file past this is not grown (dataclasses made at run time, in a loop)

_code: dict[str, CodeType] = {}
_path: str | None = None
_added = 0
_hits = 0


def cache_path() -> str:
    """``<data dir>/cache/dataclass-code-<python build>.marshal`` (``NERVE_DATA_DIR`` or the
    platform user data dir, as transcripts and history use)."""
    base = os.environ.get("NERVE_DATA_DIR")
    if not base:
        import platformdirs

        base = platformdirs.user_data_dir("nerve", appauthor=False)
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
    return os.path.join(base, "cache", f"dataclass-code-{tag}.marshal")


def _cached_exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec`` for the ``dataclasses`` module: a source text compiled once, across runs."""
    global _added, _hits
    if isinstance(source, str):
        code = _code.get(source)
        if type(code) is not CodeType:
            # dont_inherit: compiled as dataclasses' own exec compiles it (no __future__ flags
            # of this module: annotations stay objects, not strings)
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if len(_code) < MAX_ENTRIES:
                _code[source] = code
                _added += 1
        else:
            _hits += 1
        source = code
    exec(source, globals, locals)


def install(path: str | None = None) -> None:
    """Load the file (a missing or unreadable one is an empty cache) and make ``dataclasses``
    compile through it. Call before the imports it should speed up; once per process."""
    global _path
    if installed():
        return
    _path = path or cache_path()
    try:
        with open(_path, "rb") as fh:
            loaded = marshal.loads(fh.read())  # load(fh) reads in small pieces: 5x slower
    except (OSError, EOFError, ValueError, TypeError):
        loaded = None
    if isinstance(loaded, dict):
        _code.update(loaded)  # a wrong entry is never used: _cached_exec checks each hit
    import dataclasses

    dataclasses.exec = _cached_exec  # type: ignore[attr-defined]  # shadows the builtin there


def installed() -> bool:
    import dataclasses

    return getattr(dataclasses, "exec", None) is _cached_exec


def save() -> bool:
    """Write the cache if this run compiled something new; True if written. Never raises: the
    file is an optimisation only."""
    global _added
    if _path is None or not _added:
        return False
    tmp = f"{_path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(_path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            marshal.dump(_code, fh)
        os.replace(tmp, _path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    _added = 0
    return True


def stats() -> dict[str, int]:
    """Entries held, texts found in the cache, texts compiled and added since the last save."""
    return {"entries": len(_code), "hits": _hits, "added": _added}
