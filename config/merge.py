"""Merging settings dicts the way Claude Code does (reference §1.2).

Scalars: the higher-precedence file that sets a key wins, key by key. Arrays: concatenated across
all levels, duplicates dropped, higher-precedence items first. Objects: deep-merged with the same
rules. Hooks are not merged here but combined by :func:`combine_hooks`, because every level's
handlers run (an identical handler under the same event and matcher runs once).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "WHOLE_VALUE_KEYS",
    "combine_hooks",
    "deep_merge",
    "freeze_key",
    "subtract_hooks",
]

# Arrays that are taken whole from the highest level that sets them (reference §1.2 exceptions).
WHOLE_VALUE_KEYS: Final[frozenset[str]] = frozenset({"fallbackModel", "availableModels"})


def freeze_key(value: Any) -> str:
    """A hashable identity for a JSON value (object key order does not matter)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _concat(high: list[Any], low: list[Any]) -> list[Any]:
    out: list[Any] = []
    seen: set[str] = set()
    for item in (*high, *low):
        key = freeze_key(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def deep_merge(high: Mapping[str, Any], low: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``low`` under ``high``; neither input is modified. ``hooks`` is left to the caller."""
    out: dict[str, Any] = {k: v for k, v in high.items()}
    for key, low_value in low.items():
        if key not in out:
            out[key] = low_value
            continue
        high_value = out[key]
        if isinstance(high_value, dict) and isinstance(low_value, dict):
            out[key] = deep_merge(high_value, low_value)
        elif (
            isinstance(high_value, list)
            and isinstance(low_value, list)
            and key not in WHOLE_VALUE_KEYS
        ):
            out[key] = _concat(high_value, low_value)
        # otherwise the higher level's value stands (scalars, or a type mismatch in extras)
    return out


def _groups(hooks: Mapping[str, Any]) -> Iterable[tuple[str, str | None, list[dict[str, Any]]]]:
    for event, groups in hooks.items():
        for group in groups:
            yield event, group.get("matcher"), list(group.get("hooks", []))


def combine_hooks(configs: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Combine the ``hooks`` objects of several files (already validated) into one.

    Groups with the same event and the same matcher string are joined; a handler identical to
    one already present there is dropped. Order: the first config's handlers first.
    """
    table: dict[str, dict[str | None, list[dict[str, Any]]]] = {}
    seen: set[tuple[str, str | None, str]] = set()
    for hooks in configs:
        for event, matcher, handlers in _groups(hooks):
            for handler in handlers:
                ident = (event, matcher, freeze_key(handler))
                if ident in seen:
                    continue
                seen.add(ident)
                table.setdefault(event, {}).setdefault(matcher, []).append(handler)
    return _as_config(table)


def subtract_hooks(
    hooks: Mapping[str, list[dict[str, Any]]], already: Mapping[str, list[dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """``hooks`` without the handlers ``already`` has under the same event and matcher."""
    present = {
        (event, matcher, freeze_key(handler))
        for event, matcher, handlers in _groups(already)
        for handler in handlers
    }
    table: dict[str, dict[str | None, list[dict[str, Any]]]] = {}
    for event, matcher, handlers in _groups(hooks):
        for handler in handlers:
            if (event, matcher, freeze_key(handler)) not in present:
                table.setdefault(event, {}).setdefault(matcher, []).append(handler)
    return _as_config(table)


def _as_config(
    table: Mapping[str, Mapping[str | None, list[dict[str, Any]]]],
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for event, by_matcher in table.items():
        groups: list[dict[str, Any]] = []
        for matcher, handlers in by_matcher.items():
            group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            group["hooks"] = handlers
            groups.append(group)
        out[event] = groups
    return out
