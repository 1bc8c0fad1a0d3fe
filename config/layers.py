"""One settings file read, parsed and validated: a :class:`LayerFile` with provenance.

A file that cannot be used keeps its error message (``file:line:col: field: expected ...``)
instead of its data. Choices where the reference is silent:

* An empty (or whitespace-only) file is an empty object ``{}``, without a warning: ``touch``-ing
  a settings file is common and means "nothing set yet".
* Only a regular file is read: a FIFO or a device is refused by type before it is opened
  (``config.files``), so a hostile path never hangs start-up.
* ``env`` values and hook entries are judged one by one (``config.prune``): a bad one is dropped
  with a note, the rest of the file applies.
* A file broken otherwise (not JSON, invalid UTF-8, a known key of the wrong type, unreadable)
  is skipped, *except* its ``permissions.deny`` / ``permissions.ask`` rules, recovered as far
  as possible (``config.salvage``) and kept in ``restrictions``: skipping a file must never
  remove a restriction its author wrote. Where they cannot all be recovered, the layer also
  asks for every tool (``ask: ["*"]``) and ``asks_everything`` says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from config.errors import format_path, format_validation_error, locate_path, syntax_error_message
from config.files import NotRegularFile, read_regular_file
from config.models import Settings
from config.prune import Problem, prune_entries

if TYPE_CHECKING:
    from config.salvage import Recovery

__all__ = ["SOURCES", "LayerFile", "ParsedText", "parse_settings_text", "read_settings_file"]

# RuleSource values (permissions.types.RuleSource), highest precedence first.
SOURCES: Final[tuple[str, ...]] = (
    "policySettings",
    "cliArg",
    "localSettings",
    "projectSettings",
    "userSettings",
    "session",
)


@dataclass(frozen=True, slots=True)
class LayerFile:
    """A settings file (or inline JSON / flag overrides) as loaded, for display and merging.

    ``data`` is the JSON object as written (validated, bad ``env`` values and hook entries
    dropped, ``env`` values as strings) or ``None`` if the file is broken, in
    which case ``error`` says why and ``restrictions`` holds the deny/ask rules still applied.
    ``notes`` are the problems of a file that is used (entries dropped one by one).
    """

    source: str
    path: Path | None
    data: dict[str, Any] | None
    error: str | None
    base_dir: Path = field(default_factory=Path.cwd)
    label: str = ""
    restrictions: dict[str, list[str]] = field(default_factory=dict)
    # problems of a usable file: entries dropped (bad env values, hooks with a typo)
    notes: tuple[str, ...] = ()
    # broken, and its rules could not all be recovered: ``restrictions`` asks for every tool
    asks_everything: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def effective(self) -> dict[str, Any]:
        """What this file contributes to the merge: its data, or only its kept restrictions."""
        if self.data is not None:
            return self.data
        if self.restrictions:
            return {"permissions": {k: list(v) for k, v in self.restrictions.items()}}
        return {}


@dataclass(frozen=True, slots=True)
class ParsedText:
    """Settings text parsed: ``data`` (``None`` if broken), ``error``, the ``restrictions`` a
    broken file keeps, and the ``notes`` of a usable one."""

    data: dict[str, Any] | None
    error: str | None = None
    restrictions: dict[str, list[str]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    asks_everything: bool = False


def _notes(shown: str, text: str, problems: list[Problem]) -> tuple[str, ...]:
    out = []
    for loc, message in problems:
        where = locate_path(text, loc)
        place = f"{shown}:{where[0]}:{where[1]}" if where else shown
        out.append(f"{place}: {format_path(loc)}: {message}")
    return tuple(out)


def _broken(error: str, recovery: Recovery, notes: tuple[str, ...] = ()) -> ParsedText:
    return ParsedText(None, error, recovery.restrictions(), notes, not recovery.complete)


def _salvage() -> Any:
    # needed only for broken files: imported then, off the start-up path of good ones
    import config.salvage

    return config.salvage


def _from_text(text: str) -> Recovery:
    return _salvage().recover_from_text(text)  # type: ignore[no-any-return]


def _from_data(raw: Any) -> Recovery:
    return _salvage().recover_from_data(raw)  # type: ignore[no-any-return]


def _unknown() -> Recovery:
    return _salvage().Recovery(complete=False)  # type: ignore[no-any-return]


def _none_lost() -> Recovery:
    return _salvage().Recovery()  # type: ignore[no-any-return]


def parse_settings_text(text: str, shown: str) -> ParsedText:
    """Parse and validate settings JSON (see the module docstring for what is kept)."""
    if not text.strip():
        return ParsedText({})
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return _broken(syntax_error_message(shown, exc), _from_text(text))
    except RecursionError:
        return _broken(f"{shown}: invalid JSON: nested too deeply", _unknown())
    if not isinstance(raw, dict):
        kind = type(raw).__name__ if raw is not None else "null"
        return _broken(f"{shown}:1:1: (top level): expected an object, got {kind}", _none_lost())
    pruned, problems = prune_entries(raw)
    notes = _notes(shown, text, problems)
    try:
        Settings.model_validate(pruned)
    except ValidationError as exc:
        error = "\n".join(format_validation_error(shown, text, exc))
        return _broken(error, _from_data(raw), notes)
    except RecursionError:
        return _broken(f"{shown}: nested too deeply", _from_data(raw), notes)
    return ParsedText(pruned, None, {}, notes)


def _layer(source: str, path: Path, base_dir: Path, shown: str, parsed: ParsedText) -> LayerFile:
    return LayerFile(
        source,
        path,
        parsed.data,
        parsed.error,
        base_dir,
        shown,
        parsed.restrictions,
        parsed.notes,
        parsed.asks_everything,
    )


def read_settings_file(
    source: str, path: Path, base_dir: Path, shown: str, *, must_exist: bool = False
) -> LayerFile | None:
    """Read one file. ``None`` if it does not exist (normal), unless ``must_exist``."""
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        if not must_exist:
            return None
        return LayerFile(source, path, None, f"{shown}: file not found", base_dir, shown)
    except IsADirectoryError:
        return LayerFile(source, path, None, f"{shown}: is a directory", base_dir, shown)
    except NotRegularFile as exc:
        # No content to recover and nothing that could have been edited by mistake.
        return LayerFile(source, path, None, f"{shown}: {exc}", base_dir, shown)
    except OSError as exc:
        # It exists and may hold rules we cannot see: fail closed.
        reason = exc.strerror or type(exc).__name__
        error = f"{shown}: cannot read: {reason}"
        return _layer(source, path, base_dir, shown, _broken(error, _unknown()))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        error = f"{shown}:{line}: not valid UTF-8 text"
        lossy = data.decode("utf-8-sig", errors="replace")
        return _layer(source, path, base_dir, shown, _broken(error, _from_text(lossy)))
    return _layer(source, path, base_dir, shown, parse_settings_text(text, shown))
