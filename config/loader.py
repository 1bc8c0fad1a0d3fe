"""Load every settings layer with provenance and merge them (reference §1).

Precedence, highest first: policy > cli > local > project > user; session rules are added at
run time. Files per layer (lowest first within a layer, so the later one wins scalars):

* user: ``~/.claude/settings.json`` then ``~/.nerve/settings.json``
  (``$CLAUDE_CONFIG_DIR`` / ``$NERVE_CONFIG_DIR`` replace the dirs)
* project: ``<root>/.claude/settings.json`` then ``<root>/.nerve/settings.json``
* local: ``<root>/.claude/settings.local.json`` then ``<root>/.nerve/settings.local.json``
* cli: ``--settings FILE-or-inline-JSON`` then the caller's flag overrides
* policy: ``/etc/claude-code/managed-settings.json`` + its ``managed-settings.d/*.json``, then
  ``/etc/nerve/managed-settings.json`` + drop-ins (``$NERVE_POLICY_DIR`` replaces ``/etc/nerve``)

Within a layer the ``.nerve`` file beats the ``.claude`` file for scalars: our own file is the
more specific statement of intent for this tool, while the ``.claude`` file is shared with
another program. Lists (rules, directories) from both are combined, as across layers.
``<root>`` is the git repository containing cwd (walk up for ``.git``), else cwd.

Workspace trust (``config.trust``): with ``project_trusted=False`` the project layer, and a local
file that git does not show as the user's own, contribute only what restricts; the rest is
recorded in ``LoadedSettings.withheld`` and named in one warning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from config.errors import SettingsError, format_validation_error
from config.layers import LayerFile, parse_settings_text, read_settings_file
from config.loaded import BEHAVIORS, LoadedSettings, RuleEntry
from config.merge import combine_hooks, deep_merge, subtract_hooks
from config.models import Settings
from config.paths import (
    ConfigRoots,
    display_path,
    expand_home,
    find_project_root,
    policy_files,
)
from config.trust import Withheld, local_file_is_users, split_untrusted

__all__ = ["load_settings"]

_SOURCE_NAMES = {
    "user": "userSettings",
    "project": "projectSettings",
    "local": "localSettings",
    "userSettings": "userSettings",
    "projectSettings": "projectSettings",
    "localSettings": "localSettings",
}
_ALWAYS = {"policy", "policySettings", "cli", "cliArg", "session"}
_NO_AUTO = ("projectSettings", "localSettings")


def _enabled_sources(sources: set[str] | None) -> set[str]:
    if sources is None:
        return {"userSettings", "projectSettings", "localSettings"}
    enabled: set[str] = set()
    for name in sources:
        if name in _SOURCE_NAMES:
            enabled.add(_SOURCE_NAMES[name])
        elif name not in _ALWAYS:
            raise SettingsError(f"unknown setting source {name!r} (expected user, project, local)")
    return enabled


def _cli_layer(cli_settings: str, cwd: Path, home: Path) -> LayerFile:
    if cli_settings.lstrip().startswith("{"):
        p = parse_settings_text(cli_settings, "--settings")
        label = "--settings (inline JSON)"
        return LayerFile(
            "cliArg", None, p.data, p.error, cwd, label, p.restrictions, p.notes, p.asks_everything
        )
    raw = cli_settings.strip()
    path = Path(os.path.abspath(cwd / expand_home(raw, home)))
    shown = display_path(path, home)
    layer = read_settings_file("cliArg", path, path.parent, shown, must_exist=True)
    assert layer is not None  # must_exist: a missing file is a layer with an error
    return layer


def _overrides_layer(overrides: Mapping[str, Any], cwd: Path) -> LayerFile:
    data = dict(overrides)
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        # flags are typed by the CLI; a bad value there is the user's, and start-up stops
        raise SettingsError("\n".join(format_validation_error("command line", "", exc))) from exc
    return LayerFile("cliArg", None, data, None, cwd, "command-line flags")


def _drop_auto(layer: LayerFile, data: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    perms = data.get("permissions")
    if not isinstance(perms, dict) or perms.get("defaultMode") != "auto":
        return data
    warnings.append(
        f'{layer.label}: permissions.defaultMode "auto" is ignored in project and local '
        "settings; set it in user settings or pass --permission-mode auto"
    )
    return {**data, "permissions": {k: v for k, v in perms.items() if k != "defaultMode"}}


def _resolve_dir(raw: str, base: Path, home: Path) -> Path:
    return Path(os.path.normpath(base / expand_home(raw, home)))


def load_settings(
    cwd: Path,
    *,
    roots: ConfigRoots | None = None,
    cli_settings: str | None = None,
    cli_overrides: Mapping[str, Any] | None = None,
    sources: set[str] | None = None,
    project_root: Path | None = None,
    project_trusted: bool = True,
) -> LoadedSettings:
    """Load and merge every layer. Broken user/project/local/cli files become ``warnings``;
    a broken policy file (or a bad ``cli_overrides`` value) raises :class:`SettingsError`.

    ``roots`` overrides where the user and policy files live (home, policy dirs, and the
    environment read for them, ``os.environ`` by default: pass ``environ={}`` for hermetic
    tests). ``cli_overrides`` is settings-shaped, e.g. ``{"model": "opus", "permissions":
    {"defaultMode": "plan", "allow": [...], "additionalDirectories": [...]}}``; it beats
    ``--settings``. ``sources`` restricts user/project/local (policy and cli always load).
    ``project_trusted=False`` gates the project's files (see ``config.trust``); the default
    keeps this function's older contract, and the application always passes the store's answer.
    """
    cwd = Path(os.path.abspath(cwd))
    dirs = (roots or ConfigRoots()).resolve()
    root = Path(os.path.abspath(project_root)) if project_root else find_project_root(cwd)
    enabled = _enabled_sources(sources)
    found: list[LayerFile] = []  # lowest precedence first
    seen: set[str] = set()

    def add(source: str, path: Path, base: Path) -> None:
        real = os.path.realpath(path)
        if real in seen:
            return  # the same file reached twice (cwd is home, symlinked dirs): load it once
        layer = read_settings_file(source, path, base, display_path(path, dirs.home))
        if layer is not None:
            seen.add(real)
            found.append(layer)

    if "userSettings" in enabled:
        add("userSettings", dirs.claude_user / "settings.json", dirs.claude_user)
        add("userSettings", dirs.nerve_user / "settings.json", dirs.nerve_user)
    if "projectSettings" in enabled:
        add("projectSettings", root / ".claude" / "settings.json", root)
        add("projectSettings", root / ".nerve" / "settings.json", root)
    if "localSettings" in enabled:
        add("localSettings", root / ".claude" / "settings.local.json", cwd)
        add("localSettings", root / ".nerve" / "settings.local.json", cwd)
    if cli_settings is not None:
        found.append(_cli_layer(cli_settings, cwd, dirs.home))
    if cli_overrides:
        found.append(_overrides_layer(cli_overrides, cwd))
    for pdir in (dirs.claude_policy, dirs.nerve_policy):
        for path in policy_files(pdir):
            add("policySettings", path, pdir)

    warnings: list[str] = []
    for layer in found:
        problem = layer.error or ("\n".join(layer.notes) if layer.notes else None)
        if problem is not None and layer.source == "policySettings":
            # an administrator's file that does not say what was meant must not half-apply
            raise SettingsError(f"{problem}\nmanaged settings are broken; Nerve cannot start")
        warnings += layer.notes
        if layer.error is not None:
            warnings.append(f"{layer.error}\n{layer.label}: {_ignored(layer)}")
    withheld: Withheld | None = None
    if not project_trusted:
        found, withheld = _gate_untrusted(found, root)
        if withheld is not None:
            warnings.append(withheld.message())
    return _assemble(list(reversed(found)), warnings, cwd, root, dirs.home, withheld)


def _ignored(layer: LayerFile) -> str:
    """The tail of a broken file's warning: what of it still applies."""
    if layer.asks_everything:
        from config.salvage import ASK_EVERYTHING

        recovered = any(r != ASK_EVERYTHING for rules in layer.restrictions.values() for r in rules)
        kept = "the deny and ask rules recovered from it apply, and " if recovered else ""
        return (
            f"this file is ignored; {kept}since its rules could not all be read, "
            "every tool call asks until the file is fixed"
        )
    if layer.restrictions:
        return "this file is ignored except its deny and ask rules"
    return "this file is ignored"


def _relative(layer: LayerFile, root: Path) -> str:
    if layer.path is None:
        return layer.label
    try:
        return str(layer.path.relative_to(root))
    except ValueError:
        return layer.label


def _gate_untrusted(layers: list[LayerFile], root: Path) -> tuple[list[LayerFile], Withheld | None]:
    """The layers with the untrusted project files cut to what restricts, and what was cut."""
    withheld = Withheld(root=root)
    out: list[LayerFile] = []
    for layer in layers:
        gated = layer.source == "projectSettings" or (
            layer.source == "localSettings"
            and not (layer.path is not None and local_file_is_users(layer.path, root))
        )
        if not gated or layer.data is None:  # a broken file already keeps only deny/ask
            out.append(layer)
            continue
        kept, dropped = split_untrusted(layer.data)
        if dropped:
            withheld = withheld.merged_with(_relative(layer, root), dropped)
        out.append(replace(layer, data=kept))
    return out, (withheld if withheld.items() else None)


_Contribution = tuple[LayerFile, dict[str, Any]]
_Hooks = dict[str, list[dict[str, Any]]]


def _assemble(
    layers: list[LayerFile],
    warnings: list[str],
    cwd: Path,
    root: Path,
    home: Path,
    withheld: Withheld | None = None,
) -> LoadedSettings:
    """Merge ``layers`` (highest precedence first) into a :class:`LoadedSettings`."""
    contributions = [(layer, _contribution(layer, warnings)) for layer in layers]
    policy_raw = _merge_plain(contributions, policy_only=True)
    policy_hooks, other_hooks = _split_hooks(contributions)
    merged_raw = _merge_plain(contributions, policy_only=False)
    merged_raw["hooks"] = combine_hooks([policy_hooks, other_hooks])
    try:
        merged = Settings.model_validate(merged_raw)
    except ValidationError as exc:  # each part validated; only conflicting extras could do this
        raise SettingsError(f"merged settings are invalid: {exc}") from exc
    rules_only_policy = policy_raw.get("allowManagedPermissionRulesOnly") is True
    return LoadedSettings(
        merged=merged,
        layers=layers,
        warnings=warnings,
        cwd=cwd,
        project_root=root,
        file_rules=_rule_entries(contributions, rules_only_policy, warnings),
        additional_directories=_additional_directories(contributions, home),
        hooks=other_hooks,
        policy_hooks=policy_hooks,
        disable_policy_hooks=policy_raw.get("disableAllHooks") is True,
        managed_hooks_only=policy_raw.get("allowManagedHooksOnly") is True,
        managed_rules_only=rules_only_policy,
        withheld=withheld,
    )


def _contribution(layer: LayerFile, warnings: list[str]) -> dict[str, Any]:
    """What ``layer`` contributes (``defaultMode: auto`` dropped from project and local)."""
    data = layer.effective()
    if layer.source in _NO_AUTO:
        data = _drop_auto(layer, data, warnings)
    return data


def _merge_plain(contributions: list[_Contribution], *, policy_only: bool) -> dict[str, Any]:
    """Every setting but hooks merged, highest precedence first (of policy files only, or of
    every layer)."""
    merged: dict[str, Any] = {}
    for layer, data in contributions:
        if policy_only and layer.source != "policySettings":
            continue
        merged = deep_merge(merged, {k: v for k, v in data.items() if k != "hooks"})
    return merged


def _split_hooks(contributions: list[_Contribution]) -> tuple[_Hooks, _Hooks]:
    """(the policy's hooks, every other layer's hooks minus those the policy already has)."""
    policy_hooks = combine_hooks(
        d.get("hooks", {}) for lf, d in contributions if lf.source == "policySettings"
    )
    other_hooks = subtract_hooks(
        combine_hooks(
            d.get("hooks", {}) for lf, d in contributions if lf.source != "policySettings"
        ),
        policy_hooks,
    )
    return policy_hooks, other_hooks


def _additional_directories(contributions: list[_Contribution], home: Path) -> list[Path]:
    """``permissions.additionalDirectories`` of every layer, resolved, first mention first."""
    extra_dirs: list[Path] = []
    for layer, data in contributions:
        perms = data.get("permissions") or {}
        for raw_dir in perms.get("additionalDirectories") or []:
            path = _resolve_dir(raw_dir, layer.base_dir, home)
            if path not in extra_dirs:
                extra_dirs.append(path)
    return extra_dirs


def _rule_entries(
    contributions: list[_Contribution], rules_only_policy: bool, warnings: list[str]
) -> tuple[RuleEntry, ...]:
    """The permission rules of every layer, each (behavior, rule, base dir) once; only the
    policy's when it allows managed rules only (a warning counts the others)."""
    rules: list[RuleEntry] = []
    seen_rules: set[tuple[str, str, Path]] = set()
    dropped = 0
    for layer, data in contributions:
        perms = data.get("permissions") or {}
        if rules_only_policy and layer.source != "policySettings":
            dropped += sum(len(perms.get(b) or []) for b in BEHAVIORS)
            continue
        for behavior in BEHAVIORS:
            for text in perms.get(behavior) or []:
                rule = text.strip()
                key = (behavior, rule, layer.base_dir)
                if rule and key not in seen_rules:
                    seen_rules.add(key)
                    rules.append(
                        RuleEntry(behavior, rule, layer.source, layer.base_dir, layer.path)
                    )
    if dropped:
        warnings.append(
            f"managed settings allow only managed permission rules; {dropped} other rule(s) ignored"
        )
    return tuple(rules)
