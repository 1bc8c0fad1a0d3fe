"""Model names: the aliases, their remapping by environment, and which model each job uses.

Claude Code's rules (its model-configuration docs), read from the session environment
(``agent_cli.session.environment``: settings ``env`` over the shell):

* main model: ``--model`` > ``ANTHROPIC_MODEL`` > settings ``model`` > the default (``sonnet``);
* aliases ``opus`` / ``sonnet`` / ``haiku`` name the current models of the first-party API, and
  ``ANTHROPIC_DEFAULT_OPUS_MODEL`` / ``_SONNET_`` / ``_HAIKU_MODEL`` remap them (full ids, for
  gateways and third-party endpoints); ``best`` is ``opus``; ``default`` is the default;
* the fast model of side calls (the auto-mode classifier's first stage):
  ``ANTHROPIC_SMALL_FAST_MODEL`` > the ``haiku`` alias;
* sub-agents: ``CLAUDE_CODE_SUBAGENT_MODEL`` > the Agent call's ``model`` > the agent
  definition's ``model`` (``inherit`` = none) > the parent's model.

Where Nerve differs: ``opusplan`` is read as ``sonnet`` (no switch to opus in plan mode), and a
``[1m]`` suffix is dropped (the request uses the model's standard context window).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

__all__ = [
    "DEFAULT_ALIAS",
    "DEFAULT_MODEL",
    "MODEL_ALIASES",
    "REMAP_ENV",
    "expand_alias",
    "resolve_model",
    "small_fast_model",
    "subagent_model",
]

# Short names users type; values are the current first-party ids (update when models move on).
MODEL_ALIASES: dict[str, str] = {
    "opus": "claude-opus-4-7",
    "sonnet": "claude-sonnet-4-6",
    "haiku": "claude-haiku-4-5",
}
DEFAULT_ALIAS: Final[str] = "sonnet"
DEFAULT_MODEL: Final[str] = MODEL_ALIASES[DEFAULT_ALIAS]
# The variables that remap an alias to another id.
REMAP_ENV: Final[dict[str, str]] = {
    "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL",
}
# Aliases that stand for another alias.
_SAME_AS: Final[dict[str, str]] = {"best": "opus", "default": DEFAULT_ALIAS, "opusplan": "sonnet"}
_ONE_M: Final[str] = "[1m]"


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _set(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def expand_alias(name: str, env: Mapping[str, str] | None = None) -> str:
    """The model id ``name`` stands for: an alias expanded (and remapped by ``env``), any other
    name as written; a ``[1m]`` suffix dropped. ``env`` defaults to ``os.environ``."""
    text = name.strip()
    if text.lower().endswith(_ONE_M):
        text = text[: -len(_ONE_M)].strip()
    key = _SAME_AS.get(text.lower(), text.lower())
    if key not in MODEL_ALIASES:
        return text
    remapped = _set(_env(env), REMAP_ENV[key])
    if remapped is None:
        return MODEL_ALIASES[key]
    # meant to be a full id; an alias there is read from the table (once: never a loop)
    return MODEL_ALIASES.get(_SAME_AS.get(remapped.lower(), remapped.lower()), remapped)


def _first(*candidates: str | None) -> str | None:
    for candidate in candidates:
        if candidate and candidate.strip():
            return candidate
    return None


def resolve_model(
    cli_model: str | None = None,
    settings_model: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The main model: ``--model`` > ``ANTHROPIC_MODEL`` > settings ``model`` > the default."""
    env = _env(env)
    chosen = _first(cli_model, env.get("ANTHROPIC_MODEL"), settings_model) or DEFAULT_ALIAS
    return expand_alias(chosen, env)


def small_fast_model(env: Mapping[str, str] | None = None) -> str:
    """The fast model for side calls: ``ANTHROPIC_SMALL_FAST_MODEL``, else the ``haiku`` alias
    (which ``ANTHROPIC_DEFAULT_HAIKU_MODEL`` remaps)."""
    env = _env(env)
    return expand_alias(_set(env, "ANTHROPIC_SMALL_FAST_MODEL") or "haiku", env)


def subagent_model(
    requested: str | None,
    defined: str | None,
    parent: str,
    env: Mapping[str, str] | None = None,
) -> str:
    """A sub-agent's model: ``CLAUDE_CODE_SUBAGENT_MODEL`` > the call's ``model`` > the
    definition's ``model`` > ``parent`` (``inherit`` counts as not set)."""
    env = _env(env)
    named = [c for c in (requested, defined) if c and c.strip().lower() != "inherit"]
    chosen = _first(_set(env, "CLAUDE_CODE_SUBAGENT_MODEL"), *named)
    return expand_alias(chosen, env) if chosen else parent
