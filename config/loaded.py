"""The result of loading: effective settings plus the provenance of every rule and file."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from config.layers import LayerFile
from config.models import Settings
from config.trust import Withheld

__all__ = ["BEHAVIORS", "Behavior", "LoadedSettings", "RuleEntry"]

Behavior = Literal["allow", "deny", "ask"]
BEHAVIORS: Final[tuple[Behavior, ...]] = ("deny", "ask", "allow")


@dataclass(frozen=True, slots=True)
class RuleEntry:
    """One permission rule string with where it came from.

    ``base_dir`` anchors ``/``-rules (reference §2.3): project -> project root, local -> cwd,
    user -> the config dir it came from, ``--settings FILE`` -> that file's dir, CLI inline /
    flags / session -> cwd, policy -> the policy dir.
    """

    behavior: Behavior
    rule: str
    source: str
    base_dir: Path
    file: Path | None = None


@dataclass(frozen=True)
class LoadedSettings:
    """Effective settings with provenance. Everything is fixed at load time except the
    session rules, which :meth:`add_session_rule` appends to (thread-safe).

    ``hooks`` are the combined non-policy hooks and ``policy_hooks`` the managed ones, each a
    plain dict shaped like a settings file's ``hooks``; :meth:`active_hooks` applies
    ``disableAllHooks`` / ``allowManagedHooksOnly`` the way the reference says. ``layers`` are
    the files found, highest precedence first (an untrusted project file's ``data`` is only
    what it may contribute). ``withheld`` is what untrusted project files set but was not
    applied, ``None`` if nothing was (trusted, or nothing to withhold).
    """

    merged: Settings
    layers: list[LayerFile]
    warnings: list[str]
    cwd: Path
    project_root: Path
    file_rules: tuple[RuleEntry, ...] = ()
    additional_directories: list[Path] = field(default_factory=list)
    hooks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    policy_hooks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    disable_policy_hooks: bool = False
    managed_hooks_only: bool = False
    # policy's allowManagedPermissionRulesOnly: file rules of other layers were dropped
    managed_rules_only: bool = False
    withheld: Withheld | None = None
    _session_rules: list[RuleEntry] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def default_mode(self) -> str | None:
        """The start-up permission mode (``manual`` already normalised to ``default``)."""
        return self.merged.permissions.defaultMode

    @property
    def env(self) -> dict[str, str]:
        return dict(self.merged.env)

    @property
    def model(self) -> str | None:
        return self.merged.model

    @property
    def disable_all_hooks(self) -> bool:
        """``disableAllHooks`` as merged; outside policy it never disables ``policy_hooks``."""
        return bool(self.merged.disableAllHooks)

    def active_hooks(self) -> dict[str, list[dict[str, Any]]]:
        """The hooks a runner should run: policy hooks first, then the others if allowed."""
        out: dict[str, list[dict[str, Any]]] = {}
        if not self.disable_policy_hooks:
            for event, groups in self.policy_hooks.items():
                out.setdefault(event, []).extend(groups)
        if not (self.disable_all_hooks or self.disable_policy_hooks or self.managed_hooks_only):
            for event, groups in self.hooks.items():
                out.setdefault(event, []).extend(groups)
        return out

    def rule_entries(self) -> Iterator[RuleEntry]:
        """Every rule, files first (highest precedence first), then session rules."""
        yield from self.file_rules
        with self._lock:
            session = list(self._session_rules)
        yield from session

    def rules_for(self, behavior: Behavior) -> list[RuleEntry]:
        return [entry for entry in self.rule_entries() if entry.behavior == behavior]

    def add_session_rule(self, behavior: str, rule: str) -> RuleEntry | None:
        """Add an in-memory rule for this run; ``None`` if the same session rule exists."""
        entry = RuleEntry(_behavior(behavior), _rule_text(rule), "session", self.cwd, None)
        with self._lock:
            if any(_same(entry, other) for other in self._session_rules):
                return None
            self._session_rules.append(entry)
        return entry

    def remove_session_rule(self, behavior: str, rule: str) -> bool:
        """Remove a session rule; ``True`` if one was removed."""
        target = RuleEntry(_behavior(behavior), _rule_text(rule), "session", self.cwd, None)
        with self._lock:
            before = len(self._session_rules)
            self._session_rules[:] = [e for e in self._session_rules if not _same(e, target)]
            return len(self._session_rules) != before

    def summary(self) -> dict[str, Any]:
        """A JSON-friendly view (for ``/permissions`` and debugging)."""
        return {
            "defaultMode": self.default_mode,
            "files": [
                {"source": lf.source, "file": lf.label, "ok": lf.ok, "error": lf.error}
                for lf in self.layers
            ],
            "rules": [
                {"behavior": e.behavior, "rule": e.rule, "source": e.source}
                for e in self.rule_entries()
            ],
            "hooks": self.active_hooks(),
            "warnings": list(self.warnings),
            "withheld": self.withheld.items() if self.withheld is not None else [],
        }


def _behavior(value: str) -> Behavior:
    if value == "allow":
        return "allow"
    if value == "deny":
        return "deny"
    if value == "ask":
        return "ask"
    raise ValueError(f"behavior must be allow, deny or ask, not {value!r}")


def _rule_text(rule: str) -> str:
    text = rule.strip()
    if not text or "\n" in text:
        raise ValueError(f"not a permission rule: {rule!r}")
    return text


def _same(a: RuleEntry, b: RuleEntry) -> bool:
    return a.behavior == b.behavior and a.rule == b.rule
