"""Sub-agent types given as JSON: Claude Code's ``--agents '{"name": {...}}'`` flag, which is also
what the Agent SDKs' ``agents`` option becomes (they send it in ``initialize``; SDK mode folds it
into the flag, ``agent_cli.frontends.sdk.initialize``).

Each entry is ``{"description", "prompt", "tools"?, "model"?, "permissionMode"?}`` (the SDKs'
``AgentDefinition``); these agents override the built-in, user and project ones of the same
name. An entry without a description or prompt is skipped with a warning; one with
``disallowedTools`` too (Nerve cannot narrow an agent that way, and running it with more tools
than asked would loosen it); other keys Nerve does not use are named in a warning and ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from tools.builtin.agent import AgentDefinition

__all__ = ["CliAgentsError", "merge_agents", "parse_cli_agents"]

_USED = {"description", "prompt", "tools", "model", "permissionMode", "disallowedTools"}


class CliAgentsError(ValueError):
    """The JSON is not an object of agents."""


def _strings(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def parse_cli_agents(text: str) -> tuple[list[AgentDefinition], list[str]]:
    """The agents in ``text`` and the warnings about entries skipped or keys ignored."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CliAgentsError(f"--agents is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CliAgentsError('--agents must be a JSON object: {"name": {"description", ...}}')
    agents: list[AgentDefinition] = []
    warnings: list[str] = []
    for name, spec in data.items():
        where = f"agent {name!r} (--agents)"
        if not isinstance(spec, dict):
            warnings.append(f"{where}: not an object; skipped")
            continue
        description, prompt = spec.get("description"), spec.get("prompt")
        if not isinstance(description, str) or not description.strip():
            warnings.append(f"{where}: no description; skipped")
            continue
        if not isinstance(prompt, str) or not prompt.strip():
            warnings.append(f"{where}: no prompt; skipped")
            continue
        if spec.get("disallowedTools"):
            warnings.append(f"{where}: disallowedTools is not supported; skipped")
            continue
        tools = _strings(spec.get("tools")) if "tools" in spec else None
        if "tools" in spec and tools is None:
            warnings.append(f"{where}: tools must be a list of names; skipped")
            continue
        model, mode = spec.get("model"), spec.get("permissionMode")
        ignored = sorted(k for k, v in spec.items() if v is not None and k not in _USED)
        if ignored:
            warnings.append(f"{where}: {', '.join(ignored)} ignored")
        agents.append(
            AgentDefinition(
                name=name,
                description=" ".join(description.split()),
                prompt=prompt,
                tools=None if not tools or tools == ("*",) else tools,
                model=model if isinstance(model, str) and model else None,
                permission_mode=mode if isinstance(mode, str) and mode else None,
                source="flagSettings",
            )
        )
    return agents, warnings


def merge_agents(
    definitions: Iterable[AgentDefinition], extra: Iterable[AgentDefinition]
) -> list[AgentDefinition]:
    """``definitions`` with ``extra`` added, an ``extra`` one replacing any of its name."""
    by_name = {d.name: d for d in definitions}
    for d in extra:
        by_name[d.name] = d
    return list(by_name.values())
