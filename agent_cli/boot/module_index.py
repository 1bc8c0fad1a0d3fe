"""Where start-up's modules are, kept between runs of ``nerve``.

Each import asks ``sys.meta_path``; the stdlib's path finder then walks ``sys.path`` (a
directory ``stat`` for each entry tried, the file-name checks, all in importlib's interpreted
code): ~3.5 % of the instructions ``nerve`` runs to its first frame, which imports ~440
modules. :func:`install` puts a finder first that answers from what the previous run imported
(module name -> its file, whether it is a package, the search path it was found on), a table
of the start-up code cache (``code_cache.table("modules")``, written by :func:`remember` at
the run's end); a name it does not know goes on to the other finders as before.

The table is used only while ``sys.path`` names the same directories with the same
modification times (adding or removing a module in one of them changes its time), an entry
only for the same search path and while its file is still there (one ``stat``). The loaders
are the stdlib's own, so a module's code is checked against its source as always. Only source
and extension modules are kept (not built-in, frozen or namespace packages). Like the code
cache, only the real command installs it (``agent_cli.cli.main``), never a caller's process.
"""

from __future__ import annotations

import marshal
import os
import sys
from importlib.machinery import ExtensionFileLoader, ModuleSpec, SourceFileLoader
from types import ModuleType
from typing import Any

from agent_cli.boot import code_cache

__all__ = ["IndexFinder", "install", "installed", "remember"]

# one entry: (file, submodule search locations or None, extension?, search path or None)
Entry = tuple[str, tuple[str, ...] | None, bool, tuple[str, ...] | None]
MAX_PATHS = 4  # sys.path fingerprints kept (a venv and a checkout, ...); the oldest goes first


class IndexFinder:
    """A ``sys.meta_path`` finder answering from the table of the previous run."""

    def __init__(self, entries: dict[str, Entry]) -> None:
        self.entries = entries
        self.hits = 0

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        entry = self.entries.get(fullname)
        if entry is None:
            return None
        try:
            origin, locations, extension, search = entry
            if (tuple(path) if path is not None else None) != search:
                return None
            os.stat(origin)
            kept = list(locations) if locations is not None else None
        except (OSError, TypeError, ValueError):  # moved, removed or a damaged entry: the
            return None  # path finder looks for it as before
        loader = (ExtensionFileLoader if extension else SourceFileLoader)(fullname, origin)
        spec = ModuleSpec(fullname, loader, origin=origin, is_package=locations is not None)
        spec.has_location = True
        if kept is not None:
            spec.submodule_search_locations = kept
        self.hits += 1
        return spec


_finder: IndexFinder | None = None


def _fingerprint() -> bytes | None:
    """``sys.path`` and the modification time of each of its directories, or None when one
    cannot be a key."""
    stamps: list[int] = []
    for entry in sys.path:
        try:
            stamps.append(os.stat(entry or ".").st_mtime_ns)
        except (OSError, TypeError, ValueError):
            stamps.append(-1)
    try:
        return marshal.dumps((tuple(sys.path), tuple(stamps)))
    except ValueError:
        return None


def install() -> None:
    """Put the finder first in ``sys.meta_path`` (after ``code_cache.install``)."""
    global _finder
    if _finder is not None or not code_cache.installed():
        return
    key = _fingerprint()
    table = code_cache.table("modules")
    entries = table.get(key) if key is not None else None
    _finder = IndexFinder(entries if isinstance(entries, dict) else {})
    sys.meta_path.insert(0, _finder)


def installed() -> bool:
    return _finder is not None


def remember() -> None:
    """Store what this run imported from files, for the next run (call before
    ``code_cache.save``); nothing is stored when it is what the table already says."""
    if _finder is None or (key := _fingerprint()) is None:
        return
    entries: dict[str, Entry] = {}
    top = frozenset(os.path.abspath(p or ".") for p in sys.path if isinstance(p, str))
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if isinstance(spec, ModuleSpec) and spec.name == name:
            entry = _entry(spec, top)
            if entry is not None:
                entries[name] = entry
    table = code_cache.table("modules")
    if table.get(key) == entries:
        return
    table.pop(key, None)
    while len(table) >= MAX_PATHS:
        del table[next(iter(table))]
    table[key] = entries
    code_cache.note_added()


def _entry(spec: ModuleSpec, top: frozenset[str]) -> Entry | None:
    """The entry for a module Python's own search would find where it was found: in a folder
    of ``sys.path`` (``top``: their absolute paths) or of its package's ``__path__``; else None
    (a module loaded from a file elsewhere, e.g. with ``spec_from_file_location``, is not
    kept)."""
    if not spec.has_location or not isinstance(spec.origin, str):
        return None
    if type(spec.loader) not in (SourceFileLoader, ExtensionFileLoader):
        return None
    name = spec.name
    locations = spec.submodule_search_locations
    folder = os.path.dirname(spec.origin)
    if locations is not None:  # a package: its __init__ is in its own folder
        folder = os.path.dirname(folder)
    search: tuple[str, ...] | None = None
    if "." in name:
        search_path = getattr(sys.modules.get(name.rpartition(".")[0]), "__path__", None)
        if search_path is None:
            return None
        search = tuple(search_path)
        if folder not in search and os.path.abspath(folder) not in map(os.path.abspath, search):
            return None
    elif os.path.abspath(folder) not in top:
        return None
    kept = tuple(locations) if locations is not None else None
    return (spec.origin, kept, type(spec.loader) is ExtensionFileLoader, search)
