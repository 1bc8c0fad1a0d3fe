"""Entries of a settings file dropped one by one, so one mistake never voids the whole file.

A wrong type elsewhere still makes the file broken (``config.layers``), but two kinds of entry
are judged alone, because losing the file for them would lose its guards:

* ``env`` values: numbers and booleans become strings (``config.env``); an object, a list or
  ``null`` drops only that variable.
* ``hooks``: each matcher group and each handler is validated on its own. A handler with a typo
  (``"type": "comand"``, a missing ``command``) is skipped and reported; the file's other hooks
  — a PreToolUse guard above all — still run. A key that looks like a typo of a known one
  (``"matchr"``) is reported too, though the entry is kept.

Each problem is ``(location, message)``, the location a JSON path for ``config.errors``.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import ValidationError

from config.env import normalize_env
from config.errors import expected_text
from config.models import HookHandler

__all__ = ["Problem", "prune_entries"]

Problem = tuple[tuple[str | int, ...], str]

_GROUP_KEYS: Final[tuple[str, ...]] = ("matcher", "hooks")
_HANDLER_KEYS: Final[tuple[str, ...]] = (
    "type",
    "command",
    "args",
    "timeout",
    "if",
    "async",
    "asyncRewake",
    "statusMessage",
    "once",
    "shell",
    "url",
    "headers",
    "allowedEnvVars",
    "prompt",
    "model",
)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else "a number"


def _typos(
    entry: dict[str, Any], known: tuple[str, ...], loc: tuple[str | int, ...]
) -> list[Problem]:
    import difflib  # only files with unknown keys pay for it

    out: list[Problem] = []
    for key in entry:
        if key in known:
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        if close and close[0] not in entry:
            tail = "; without it this group runs for every tool" if close[0] == "matcher" else ""
            out.append(((*loc, key), f"unknown key; did you mean {close[0]!r}?{tail}"))
    return out


def _handler_problems(handler: Any, loc: tuple[str | int, ...]) -> list[Problem]:
    try:
        HookHandler.model_validate(handler)
    except ValidationError as exc:
        out: list[Problem] = []
        for err in exc.errors():
            where = (*loc, *err.get("loc", ()))
            out.append((where, f"{expected_text(dict(err))}; this hook is skipped"))
        return out or [(loc, "invalid hook; this hook is skipped")]
    return []


def _prune_group(group: Any, loc: tuple[str | int, ...], problems: list[Problem]) -> Any:
    """The group with its valid handlers, or ``None`` if nothing of it can run."""
    if not isinstance(group, dict):
        problems.append((loc, f"expected an object, got {_kind(group)}; this group is skipped"))
        return None
    problems += _typos(group, _GROUP_KEYS, loc)
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        problems.append(((*loc, "matcher"), "expected a string; this group is skipped"))
        return None
    handlers = group.get("hooks")
    if not isinstance(handlers, list):
        what = "required field is missing" if handlers is None else "expected a list"
        problems.append(((*loc, "hooks"), f"{what}; this group is skipped"))
        return None
    kept = []
    for index, handler in enumerate(handlers):
        hloc = (*loc, "hooks", index)
        found = _handler_problems(handler, hloc)
        if found:
            problems += found
        else:
            problems += _typos(handler, _HANDLER_KEYS, hloc)
            kept.append(handler)
    if handlers and not kept:
        return None
    return {**group, "hooks": kept}


def _prune_hooks(raw: Any, problems: list[Problem]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        problems.append((("hooks",), f"expected an object, got {_kind(raw)}; no hook of it runs"))
        return {}
    out: dict[str, Any] = {}
    for event, groups in raw.items():
        loc: tuple[str | int, ...] = ("hooks", event)
        if not isinstance(groups, list):
            problems.append((loc, f"expected a list, got {_kind(groups)}; no {event} hook runs"))
            continue
        pruned = (_prune_group(group, (*loc, i), problems) for i, group in enumerate(groups))
        out[event] = [group for group in pruned if group is not None]
    return out


def prune_entries(raw: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """``raw`` with bad ``env`` variables and hook entries dropped, numbers in ``env`` as
    strings, and a problem for each thing dropped or suspicious. ``raw`` is not modified."""
    out = dict(raw)
    problems: list[Problem] = []
    if "env" in raw:
        env, env_problems = normalize_env(raw["env"])
        out["env"] = env
        for key, what in env_problems:
            if key == "":
                problems.append((("env",), f"{what}; no variable of it is set"))
            else:
                problems.append((("env", key), f"{what}; this variable is not set"))
    if "hooks" in raw:
        out["hooks"] = _prune_hooks(raw["hooks"], problems)
    return out, problems
