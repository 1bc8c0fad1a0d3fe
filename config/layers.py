"""One settings file read, parsed and validated: a :class:`LayerFile` with provenance.

A file that cannot be used keeps its error message (``file:line:col: field: expected ...``)
instead of its data. Choices where the reference is silent:

* An empty (or whitespace-only) file is an empty object ``{}``, without a warning: ``touch``-ing
  a settings file is common and means "nothing set yet".
* A file broken by validation (valid JSON, a known key of the wrong type) is skipped, *except*
  its ``permissions.deny`` / ``permissions.ask`` strings, which are kept in ``restrictions``:
  skipping a file must never remove a restriction its author wrote (defaults fail closed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from config.errors import format_validation_error, syntax_error_message
from config.models import Settings

__all__ = ["SOURCES", "LayerFile", "parse_settings_text", "read_settings_file"]

# RuleSource values (permissions.types.RuleSource), highest precedence first.
SOURCES: Final[tuple[str, ...]] = (
    "policySettings",
    "cliArg",
    "localSettings",
    "projectSettings",
    "userSettings",
    "session",
)

_RESTRICTIVE: Final[tuple[str, ...]] = ("deny", "ask")


@dataclass(frozen=True, slots=True)
class LayerFile:
    """A settings file (or inline JSON / flag overrides) as loaded, for display and merging.

    ``data`` is the JSON object as written (validated) or ``None`` if the file is broken, in
    which case ``error`` says why and ``restrictions`` holds the deny/ask rules still applied.
    """

    source: str
    path: Path | None
    data: dict[str, Any] | None
    error: str | None
    base_dir: Path = field(default_factory=Path.cwd)
    label: str = ""
    restrictions: dict[str, list[str]] = field(default_factory=dict)

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


def _salvage(raw: Any) -> dict[str, list[str]]:
    if not isinstance(raw, dict) or not isinstance(raw.get("permissions"), dict):
        return {}
    perms = raw["permissions"]
    kept: dict[str, list[str]] = {}
    for behavior in _RESTRICTIVE:
        items = perms.get(behavior)
        if isinstance(items, list):
            strings = [item for item in items if isinstance(item, str) and item.strip()]
            if strings:
                kept[behavior] = strings
    return kept


def parse_settings_text(
    text: str, shown: str
) -> tuple[dict[str, Any] | None, str | None, dict[str, list[str]]]:
    """Parse and validate settings JSON: ``(data, error, restrictions kept if broken)``."""
    if not text.strip():
        return {}, None, {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, syntax_error_message(shown, exc), {}
    except RecursionError:
        return None, f"{shown}: invalid JSON: nested too deeply", {}
    if not isinstance(raw, dict):
        kind = type(raw).__name__ if raw is not None else "null"
        return None, f"{shown}:1:1: (top level): expected an object, got {kind}", {}
    try:
        Settings.model_validate(raw)
    except ValidationError as exc:
        return None, "\n".join(format_validation_error(shown, text, exc)), _salvage(raw)
    except RecursionError:
        return None, f"{shown}: nested too deeply", {}
    return raw, None, {}


def read_settings_file(
    source: str, path: Path, base_dir: Path, shown: str, *, must_exist: bool = False
) -> LayerFile | None:
    """Read one file. ``None`` if it does not exist (normal), unless ``must_exist``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if not must_exist:
            return None
        return LayerFile(source, path, None, f"{shown}: file not found", base_dir, shown)
    except IsADirectoryError:
        return LayerFile(source, path, None, f"{shown}: is a directory", base_dir, shown)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return LayerFile(source, path, None, f"{shown}: cannot read: {reason}", base_dir, shown)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return LayerFile(
            source, path, None, f"{shown}:{line}: not valid UTF-8 text", base_dir, shown
        )
    parsed, error, kept = parse_settings_text(text, shown)
    return LayerFile(source, path, parsed, error, base_dir, shown, kept)
