"""What the flags the Agent SDKs pass add to a session: ``--thinking`` /
``--max-thinking-tokens`` / ``--effort`` (a ``ThinkingChoice``, as ``/model`` sets one) and
``--agents`` (sub-agent types given as JSON, ``agent_cli.customize.cli_agents``)."""

from __future__ import annotations

from typing import Any

from agent_cli.options import RunOptions
from agent_cli.session.resume import SessionError

__all__ = ["flag_agents", "flag_thinking"]


def flag_thinking(options: RunOptions) -> Any:
    """The ``ThinkingChoice`` the thinking flags make (None without them): ``--thinking
    disabled`` or ``--max-thinking-tokens 0`` off; a budget (at least the API's 1,024) on with
    that budget; ``enabled``/``adaptive`` on (adaptive where the model has it)."""
    from agent_cli.model.thinking import ThinkingChoice, budget_of

    tokens = options.max_thinking_tokens
    enabled: bool | None = None
    budget: int | None = None
    if options.thinking == "disabled" or tokens == 0:
        enabled = False
    elif tokens:
        enabled, budget = True, budget_of(tokens)
    elif options.thinking is not None:
        enabled = True
    if enabled is None and options.effort is None:
        return None
    return ThinkingChoice(enabled, budget, options.effort)


def flag_agents(options: RunOptions, warnings: list[str]) -> list[Any]:
    """The ``--agents`` definitions (none without the flag); a malformed value is an error."""
    if not options.agents:
        return []
    from agent_cli.customize.cli_agents import CliAgentsError, parse_cli_agents

    try:
        agents, problems = parse_cli_agents(options.agents)
    except CliAgentsError as exc:
        raise SessionError(str(exc)) from exc
    warnings += problems
    return agents
