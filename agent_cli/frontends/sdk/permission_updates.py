"""The Agent SDK's ``updatedPermissions`` ("always allow") applied to the session.

A ``can_use_tool`` allow may carry Claude Code's ``PermissionUpdate`` list: ``addRules``,
``replaceRules``, ``removeRules`` (``rules`` of ``{"toolName", "ruleContent"?}``, ``behavior``
allow/deny/ask), ``setMode`` and ``addDirectories``, each with a ``destination``: ``session``
(this session only), ``localSettings`` (``.claude/settings.local.json``), ``projectSettings``
(``.claude/settings.json``) or ``userSettings`` (``~/.claude/settings.json``). Rules go
through ``PermissionAdmin.add_rule`` — the same path as the TUI's "don't ask again" — so a deny
rule still beats an added allow (the engine checks deny first).

As in Claude Code, one malformed update makes the whole list ignored (the call itself is still
allowed once); nothing is half-applied from a list that did not parse. ``setMode`` and
``addDirectories`` change the session only: a settings destination is reported, not written.
A rule holding a control character or an invisible one (a bidi override, a zero-width space)
is malformed: nobody reading the settings file would see what it allows.
"""

from __future__ import annotations

from typing import Any

from tools.records import datarecord
from tools.terminal_text import has_hidden, reveal

__all__ = ["PermissionUpdate", "apply_updates", "parse_updates"]

_DESTINATIONS = ("session", "localSettings", "projectSettings", "userSettings")
_BEHAVIORS = ("allow", "deny", "ask")
_RULE_TYPES = ("addRules", "replaceRules", "removeRules")


@datarecord(frozen=True)
class PermissionUpdate:
    type: str
    destination: str
    rules: tuple[str, ...] = ()
    behavior: str = ""
    mode: str = ""
    directories: tuple[str, ...] = ()


def _rule_text(raw: Any) -> str:
    if not isinstance(raw, dict) or not isinstance(raw.get("toolName"), str):
        raise ValueError('a rule needs a "toolName" string')
    name = raw["toolName"].strip()
    content = raw.get("ruleContent")
    if not name or (content is not None and not isinstance(content, str)):
        raise ValueError(f"rule {raw!r}: toolName must be non-empty, ruleContent a string")
    text = f"{name}({content})" if content else name
    if has_hidden(text):
        raise ValueError(f"rule {reveal(text)} holds control or invisible characters")
    return text


def _parse_one(raw: Any) -> PermissionUpdate:
    if not isinstance(raw, dict):
        raise ValueError(f"an update must be an object, got {type(raw).__name__}")
    kind = raw.get("type")
    destination = raw.get("destination", "session")
    if destination not in _DESTINATIONS:
        raise ValueError(f"{kind}: unknown destination {destination!r}")
    if kind in _RULE_TYPES:
        behavior = raw.get("behavior")
        rules = raw.get("rules")
        if behavior not in _BEHAVIORS or not isinstance(rules, list):
            raise ValueError(f"{kind} needs a behavior (allow/deny/ask) and a rules list")
        texts = tuple(_rule_text(r) for r in rules)
        return PermissionUpdate(kind, destination, rules=texts, behavior=behavior)
    if kind == "setMode":
        mode = raw.get("mode")
        if not isinstance(mode, str) or not mode:
            raise ValueError("setMode needs a mode")
        return PermissionUpdate(kind, destination, mode=mode)
    if kind == "addDirectories":
        dirs = raw.get("directories")
        if not isinstance(dirs, list) or not all(isinstance(d, str) and d for d in dirs):
            raise ValueError("addDirectories needs a list of directories")
        return PermissionUpdate(kind, destination, directories=tuple(dirs))
    raise ValueError(f"unsupported permission update type {kind!r}")


def parse_updates(raw: Any) -> tuple[list[PermissionUpdate], str | None]:
    """The updates, or none and why (one bad update voids the list, as in Claude Code)."""
    if raw is None:
        return [], None
    if not isinstance(raw, list):
        return [], f"updatedPermissions must be a list, got {type(raw).__name__}"
    try:
        return [_parse_one(item) for item in raw], None
    except ValueError as exc:
        return [], str(exc)


def _apply(session: Any, update: PermissionUpdate) -> list[str]:
    notes: list[str] = []
    if update.type == "replaceRules":
        for view in session.rules():
            if view.behavior == update.behavior and view.source == update.destination:
                session.remove_rule(view.behavior, view.rule, view.source)
    if update.type == "removeRules":
        for rule in update.rules:
            session.remove_rule(update.behavior, rule, update.destination)
    elif update.type in ("addRules", "replaceRules"):
        for rule in update.rules:
            session.add_rule(update.behavior, rule, update.destination)
    elif update.type == "setMode":
        session.set_mode(update.mode)
    elif update.type == "addDirectories":
        for directory in update.directories:
            session.add_directory(directory)
    if update.type in ("setMode", "addDirectories") and update.destination != "session":
        notes.append(
            f"{update.type} applied to this session only (not saved to {update.destination})"
        )
    return notes


def apply_updates(session: Any, raw: Any) -> list[str]:
    """Apply ``updatedPermissions`` to ``session``; returns what went wrong (for stderr)."""
    updates, why = parse_updates(raw)
    if why is not None:
        return [f"updatedPermissions ignored: {why}"]
    notes: list[str] = []
    for update in updates:
        try:
            notes += _apply(session, update)
        except Exception as exc:  # a broken settings file must not end the turn
            notes.append(f"updatedPermissions {update.type} ({update.destination}) failed: {exc}")
    return notes
