"""What start-up compiles from the same text on every run, kept between runs of ``nerve``.

Two things cost ``nerve`` ~110 ms of CPU on every start on the development machine, though
their input never changes between runs:

* every ``@dataclass`` writes its ``__init__``, ``__repr__``, ``__eq__`` (frozen:
  ``__setattr__``, ``__delattr__``, ``__hash__``) as source text and compiles it with ``exec``:
  ~0.4 ms a class, three quarters of what a dataclass costs, and Textual and our own modules
  define ~270 of them before the session is ready;
* every regular expression compiled at import (Textual's CSS tokenizer, ours: ~140) is parsed
  and translated to the regex engine's program in pure Python (~35 ms);
* every string annotation that ``typing`` (pydantic, ``get_type_hints``) turns into a
  ``ForwardRef`` is compiled (~1,200 of them, ~300 different, ~12 ms);
* every ``namedtuple`` (``typing.NamedTuple``: Textual's geometry, Rich's segments; ~70 before
  the first frame) compiles its ``__new__`` from a ``lambda`` text with ``eval`` (~3 ms).

:func:`install` loads one file (``marshal``, one per Python build) and gives the
``dataclasses`` module an ``exec`` that takes the compiled code of a text it has seen, ``typing``
a ``compile`` that does the same for forward references, ``collections`` such an ``eval``, and ``re`` a compiler that takes the
engine program of a ``(pattern, flags)`` it has seen; the rest is compiled as before and added. :func:`save` writes the file back when something was added.

Entries are kept as ``marshal`` bytes and decoded when first used (``_take``): a run uses a
part of them before its first frame, and decoding all of them took ~7 ms of it. Other
start-up modules keep their own entries in named tables of the same file (:func:`table`,
e.g. ``css_cache``'s parsed stylesheets).

A text maps to exactly the code ``compile`` makes of it (with the flags of the module's own
``exec``: no ``__future__`` feature inherited), and a pattern to exactly the program the
stdlib makes (which the engine validates again when it is loaded), so classes and patterns are
the same with or without the file. Only the real command installs it (``agent_cli.cli.main``),
never a caller's process. The file is trusted as ``__pycache__`` files are: it lives in the
user's own data dir.
"""

from __future__ import annotations

import marshal
import os
import sys
from types import CodeType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_ENTRIES",
    "cache_path",
    "install",
    "installed",
    "note_added",
    "save",
    "stats",
    "table",
]

MAX_ENTRIES = 5_000  # per table; a file past this is not grown (classes made in a loop)
_PREFIX = "start-code-"  # cache_path's file names

# each value is its marshal bytes until first used (_take), then the object
_code: dict[str, Any] = {}  # dataclass method source -> its compiled code
_eval: dict[str, Any] = {}  # forward reference (an annotation's text) -> its code
_regex: dict[tuple[Any, int], Any] = {}  # (pattern, flags) -> _sre.compile args (a tuple)
_tables: dict[str, dict[Any, Any]] = {}  # other modules' tables (table()), kept as loaded
_path: str | None = None
_added = 0
_hits = 0
_re_compile: Any = None  # the stdlib's re._compiler.compile, while ours is installed


def cache_path() -> str:
    """``$NERVE_CODE_CACHE`` (a file; the benches share one between runs), else
    ``<data dir>/cache/start-code-<nerve version>-<python build>.marshal`` (``NERVE_DATA_DIR``
    or the platform user data dir, as transcripts and history use). A new version starts a
    new file (:func:`save` removes the others), so texts of old versions do not pile up."""
    if path := os.environ.get("NERVE_CODE_CACHE"):
        return path
    base = os.environ.get("NERVE_DATA_DIR")
    if not base:
        import platformdirs

        base = platformdirs.user_data_dir("nerve", appauthor=False)
    from agent_cli import __version__

    tag = f"{__version__}-{sys.implementation.cache_tag}-{sys.hexversion:x}"
    return os.path.join(base, "cache", f"{_PREFIX}{tag}.marshal")


def _take(entries: dict[Any, Any], key: Any, kind: type) -> Any:
    """The entry for ``key`` decoded (and kept decoded), or None when there is none or it is
    not a ``kind`` (a damaged entry is never used: the caller compiles afresh)."""
    entry = entries.get(key)
    if type(entry) is bytes:
        try:
            entry = marshal.loads(entry)
        except (EOFError, ValueError, TypeError):
            entry = None
        if type(entry) is kind:
            entries[key] = entry
    return entry if type(entry) is kind else None


def table(name: str) -> dict[Any, Any]:
    """The named table of another start-up module (created empty): keys and values it stores
    must be ``marshal``-able; call :func:`note_added` after storing so :func:`save` writes."""
    return _tables.setdefault(name, {})


def note_added() -> None:
    global _added
    _added += 1


def _cached_exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec`` for the ``dataclasses`` module: a source text compiled once, across runs."""
    global _added, _hits
    if isinstance(source, str):
        code = _take(_code, source, CodeType)
        if code is None:
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


def _cached_compile(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
    """``compile`` for the ``typing`` module (``ForwardRef``): an annotation's text compiled
    once, across runs. Any other call is passed on as it came."""
    global _added, _hits
    if args or kwargs or filename != "<string>" or mode != "eval" or not isinstance(source, str):
        return compile(source, filename, mode, *args, **kwargs)
    code = _take(_eval, source, CodeType)
    if code is not None:
        _hits += 1
        return code
    code = compile(source, filename, mode, dont_inherit=True)  # typing has no __future__ flags
    if len(_eval) < MAX_ENTRIES:
        _eval[source] = code
        _added += 1
    return code


def _cached_eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
    """``eval`` for the ``collections`` module (``namedtuple``'s ``__new__``): the text compiled
    once, across runs, as ``eval`` compiles it (eval mode, ``<string>``, no ``__future__``
    flags: the module has none). A text with leading blanks (which ``eval`` strips) is passed
    on as it came."""
    if isinstance(source, str) and not source.startswith((" ", "\t")):
        source = _cached_compile(source, "<string>", "eval")
    return eval(source, globals, locals)


def _cached_re_compile(p: Any, flags: Any = 0) -> Any:
    """``re._compiler.compile`` with the engine program of a pattern kept across runs (the
    stdlib's steps, whose result it stores: see the module docstring)."""
    global _added, _hits
    import re._compiler as compiler  # loaded: this replaced its compile

    if not isinstance(p, (str, bytes)) or flags & compiler.SRE_FLAG_DEBUG:
        return _re_compile(p, flags)
    key = (p, int(flags))
    args = _take(_regex, key, tuple)
    if args is not None:
        try:
            pattern = compiler._sre.compile(p, *args)  # the engine validates the program
        except Exception:  # an entry that does not fit: compiled afresh below
            pass
        else:
            _hits += 1
            return pattern
    parsed = compiler._parser.parse(p, flags)
    code = [int(op) for op in compiler._code(parsed, flags)]  # plain ints: marshal takes them
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    args = (int(flags | parsed.state.flags), code, parsed.state.groups - 1)
    args += (groupindex, tuple(indexgroup))
    if len(_regex) < MAX_ENTRIES:
        _regex[key] = args
        _added += 1
    return compiler._sre.compile(p, *args)


def _regex_supported() -> bool:
    try:
        import re._compiler as compiler
    except ImportError:
        return False
    needed = ("compile", "_code", "_parser", "_sre", "SRE_FLAG_DEBUG")
    return all(hasattr(compiler, name) for name in needed)


def install(path: str | None = None) -> None:
    """Load the file (a missing or unreadable one is an empty cache) and make ``dataclasses``
    and ``re`` compile through it. Call before the imports it should speed up."""
    global _path, _re_compile
    if installed():
        return
    _path = path or cache_path()
    try:
        with open(_path, "rb") as fh:
            loaded = marshal.loads(fh.read())  # load(fh) reads in small pieces: 5x slower
    except (OSError, EOFError, ValueError, TypeError):
        loaded = None
    import dataclasses

    if isinstance(loaded, dict):  # a wrong entry is never used: checked at each hit
        for entries, name in ((_code, "code"), (_eval, "eval")):
            if isinstance(loaded.get(name), dict):
                entries.update(loaded[name])
        if isinstance(loaded.get("tables"), dict):
            _tables.update((k, v) for k, v in loaded["tables"].items() if isinstance(v, dict))
    dataclasses.exec = _cached_exec  # type: ignore[attr-defined]  # shadows the builtin there
    import typing

    typing.compile = _cached_compile  # type: ignore[attr-defined]  # shadows the builtin there
    import collections

    collections.eval = _cached_eval  # type: ignore[attr-defined]  # shadows the builtin there
    if _regex_supported():
        import re._compiler as compiler

        if isinstance(loaded, dict) and loaded.get("sre") == compiler._sre.MAGIC:
            regex = loaded.get("re")
            if isinstance(regex, dict):
                _regex.update(regex)
        _re_compile = compiler.compile
        compiler.compile = _cached_re_compile


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
    data: dict[str, Any] = {
        "code": _encoded(_code),
        "eval": _encoded(_eval),
        "re": _encoded(_regex),
        "tables": _tables,
    }
    if _re_compile is not None:
        import re._compiler as compiler

        data["sre"] = compiler._sre.MAGIC
    try:
        os.makedirs(os.path.dirname(_path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            marshal.dump(data, fh)
        os.replace(tmp, _path)
    except Exception:  # full disk, read-only dir, ...: the next run compiles again
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    _added = 0
    _remove_others(_path)
    return True


def _encoded(entries: dict[Any, Any]) -> dict[Any, bytes]:
    return {k: v if type(v) is bytes else marshal.dumps(v) for k, v in entries.items()}


def _remove_others(path: str) -> None:
    """Other versions' and builds' files next to ``path`` (``cache_path``'s names only)."""
    folder, name = os.path.split(path)
    if not name.startswith(_PREFIX):
        return  # a file the user named (NERVE_CODE_CACHE): its folder is not ours
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for other in names:
        if other != name and other.startswith(_PREFIX) and other.endswith(".marshal"):
            try:
                os.unlink(os.path.join(folder, other))
            except OSError:
                pass


def stats() -> dict[str, int]:
    """Entries held (code texts, forward references, patterns), hits, and entries added since
    the last save."""
    entries = {"entries": len(_code), "forward_refs": len(_eval), "patterns": len(_regex)}
    entries |= {f"table:{name}": len(t) for name, t in _tables.items()}
    return {**entries, "hits": _hits, "added": _added}
