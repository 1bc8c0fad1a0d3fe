"""``/config``'s data, with no UI: the effective settings with the file each comes from, and the
few settings the app can change, written to the user's settings file.

The effective values are the session's (loaded at start). A value is shown with the layers that
set it, highest precedence first; a list or object merged from several layers names them all.
A change goes to ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``) through
``config.writer``, as ``nerve config set -g`` writes it; when a higher layer sets the same key
the change is saved but that layer still wins, and the message says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from tools.records import datarecord

__all__ = [
    "TOGGLES",
    "SettingRow",
    "Toggle",
    "apply_toggle",
    "layer_sources",
    "next_value",
    "rule_file",
    "setting_rows",
    "settings_lines",
    "toggle_value",
    "user_settings_path",
]

_MISSING: Final = object()
_SKIPPED: Final[frozenset[str]] = frozenset({"hooks", "permissions", "$schema"})
_VALUE_CHARS: Final[int] = 70


@datarecord(frozen=True, slots=True)
class Toggle:
    """A setting ``/config`` can change: its key path, label, the values it cycles through
    (the first is what an unset key means) and when a change takes effect."""

    keys: tuple[str, ...]
    label: str
    choices: tuple[Any, ...]
    effect: str  # "now" or "next session"

    @property
    def dotted(self) -> str:
        return ".".join(self.keys)


TOGGLES: Final[tuple[Toggle, ...]] = (
    Toggle(
        ("permissions", "defaultMode"),
        "Default permission mode",
        ("default", "acceptEdits", "plan", "dontAsk"),
        "next session",
    ),
    Toggle(
        ("preferredNotifChannel",),
        "Notifications (terminal bell)",
        ("notifications_disabled", "terminal_bell"),
        "now",
    ),
    Toggle(("alwaysThinkingEnabled",), "Extended thinking", (False, True), "next session"),
    Toggle(("theme",), "Theme", ("dark", "light", "dark-ansi", "light-ansi"), "now"),
    Toggle(("verbose",), "Verbose (every tool result whole)", (False, True), "now"),
)


@datarecord(frozen=True, slots=True)
class SettingRow:
    """One effective setting: dotted key, value, and the labels of the layers that set it."""

    key: str
    value: Any
    sources: tuple[str, ...]

    def text(self) -> str:
        shown = json.dumps(self.value, ensure_ascii=False)
        if len(shown) > _VALUE_CHARS:
            shown = shown[: _VALUE_CHARS - 1] + "…"
        if len(self.sources) < 2:
            where = self.sources[0] if self.sources else "default"
        elif isinstance(self.value, (dict, list)):  # lists and objects combine across layers
            where = f"merged from {', '.join(self.sources)}"
        else:  # the highest layer wins
            where = f"{self.sources[0]}; overrides {', '.join(self.sources[1:])}"
        return f"{self.key} = {shown}  ({where})"


def _dig(data: Mapping[str, Any] | None, keys: tuple[str, ...]) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return _MISSING
        node = node[key]
    return node


def layer_sources(loaded: Any, keys: tuple[str, ...]) -> list[str]:
    """The labels of the layers that set ``keys``, highest precedence first."""
    out = []
    for layer in getattr(loaded, "layers", ()):
        if _dig(layer.effective(), keys) is not _MISSING:
            out.append(layer.label or layer.source)
    return out


def _effective(loaded: Any) -> dict[str, Any]:
    merged = getattr(loaded, "merged", None)
    if merged is None:
        return {}
    data: dict[str, Any] = merged.model_dump(exclude_defaults=True, by_alias=True)
    data.update(merged.extras())
    return data


def setting_rows(loaded: Any) -> list[SettingRow]:
    """Every effective setting but hooks and rules (``/hooks``, ``/permissions`` show those),
    ``permissions.defaultMode`` included; sorted by key."""
    data = _effective(loaded)
    rows = []
    for key, value in data.items():
        if key in _SKIPPED:
            continue
        rows.append(SettingRow(key, value, tuple(layer_sources(loaded, (key,)))))
    mode = _dig(data, ("permissions", "defaultMode"))
    if mode is not _MISSING:
        keys = ("permissions", "defaultMode")
        rows.append(SettingRow(".".join(keys), mode, tuple(layer_sources(loaded, keys))))
    return sorted(rows, key=lambda r: r.key)


def toggle_value(loaded: Any, toggle: Toggle) -> Any:
    """The toggle's effective value (its first choice when unset)."""
    value = _dig(_effective(loaded), toggle.keys)
    return toggle.choices[0] if value is _MISSING or value is None else value


def next_value(toggle: Toggle, current: Any) -> Any:
    """The choice after ``current`` (the first for a value not among the choices)."""
    for i, choice in enumerate(toggle.choices):
        if choice == current and type(choice) is type(current):
            return toggle.choices[(i + 1) % len(toggle.choices)]
    return toggle.choices[0]


def user_settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR/settings.json``), as ``nerve config
    set -g`` writes it."""
    from config.paths import resolve_config_dirs

    env = os.environ if environ is None else environ
    dirs = resolve_config_dirs(home=None, policy_dir=None, claude_policy_dir=None, environ=env)
    return dirs.claude_user / "settings.json"


def apply_toggle(
    loaded: Any, toggle: Toggle, value: Any, environ: Mapping[str, str] | None = None
) -> str:
    """Write ``value`` to the user settings file; the message for the user. Raises
    ``config.SettingsWriteError`` (the file is broken: it is left as it was)."""
    from config.writer import set_settings_value

    path = user_settings_path(environ)
    set_settings_value(path, toggle.keys, value)
    # the user file is the lowest layer: any other layer that sets the key wins over it
    above = [
        lf.label or lf.source
        for lf in getattr(loaded, "layers", ())
        if lf.source != "userSettings" and _dig(lf.effective(), toggle.keys) is not _MISSING
    ]
    shown = json.dumps(value)
    if above:
        return f"Saved {toggle.dotted} = {shown} to {path}, but {above[0]} sets it and wins."
    merged = getattr(loaded, "merged", None)
    if toggle.effect == "now" and merged is not None and len(toggle.keys) == 1:
        extras = merged.model_extra
        if extras is not None:  # the app reads the live value (the bell, theme, verbose)
            extras[toggle.keys[0]] = value
    when = "now" if toggle.effect == "now" else "from the next session"
    return f"Saved {toggle.dotted} = {shown} to {path}; it applies {when}."


def settings_lines(loaded: Any) -> list[str]:
    """``/config`` as text (print mode): the effective settings and where each comes from."""
    rows = setting_rows(loaded)
    if not rows:
        return ["No settings set (every value is the default)."]
    return ["Settings (highest-precedence file first):", *[f"  {r.text()}" for r in rows]]


_SOURCE_NAMES: Final[dict[str, str]] = {  # where a rule added since the start was written
    "userSettings": "~/.claude/settings.json",
    "projectSettings": ".claude/settings.json",
    "localSettings": ".claude/settings.local.json",
    "session": "this session",
    "cliArg": "command line",
    "policySettings": "managed settings",
}


def rule_file(loaded: Any, behavior: str, rule: str, source: str) -> str:
    """Where a rule of ``source`` is written: the label of the first layer of that source that
    lists it (``.claude/settings.local.json``), else a name for the source."""
    for layer in getattr(loaded, "layers", ()):
        if layer.source != source:
            continue
        rules = _dig(layer.effective(), ("permissions", behavior))
        if isinstance(rules, list) and any(isinstance(r, str) and r.strip() == rule for r in rules):
            return layer.label or source
    return _SOURCE_NAMES.get(source, source)
