"""``/model thinking on|off|default`` and ``/model effort <level>|default``: extended thinking
and effort for the rest of the session, over ``MAX_THINKING_TOKENS``, ``alwaysThinkingEnabled``
and ``effortLevel`` (``agent_cli/model/thinking.py`` decides what each model gets: adaptive or a
budget, and effort only where the model has it). ``/model thinking`` alone says what is in use.
"""

from __future__ import annotations

from typing import Any

from agent_cli.slash.registry import SlashHost

__all__ = ["OPTION_WORDS", "model_option", "thinking_summary"]

OPTION_WORDS = ("thinking", "effort")
_SWITCH = {"on": True, "off": False, "default": None}


def thinking_summary(session: Any) -> str:
    """ "Thinking: on · effort: low (this session)" or "...as configured"."""
    from agent_cli.model.thinking import ThinkingChoice, has_effort

    choice = getattr(getattr(session, "loop", None), "thinking", None)
    if not isinstance(choice, ThinkingChoice):
        choice = ThinkingChoice()
    on = {True: "on", False: "off", None: "as configured"}[choice.enabled]
    effort = choice.effort or "as configured"
    if not has_effort(str(session.model)):
        effort += f" ({session.model} has no effort setting)"
    return f"Thinking: {on} · effort: {effort}"


async def model_option(host: SlashHost, args: str) -> None:
    """``args`` starts with one of ``OPTION_WORDS``."""
    from agent_cli.model.thinking import EFFORT_LEVELS, ThinkingChoice

    session: Any = host.session
    word, _, value = args.partition(" ")
    value = value.strip().lower()
    current = getattr(session.loop, "thinking", None)
    choice = current if isinstance(current, ThinkingChoice) else ThinkingChoice()
    if not value:
        host.say(thinking_summary(session))
        return
    if word == "thinking":
        if value not in _SWITCH:
            host.say("Usage: /model thinking on|off|default", "error")
            return
        choice = ThinkingChoice(_SWITCH[value], None, choice.effort)
    else:
        if value != "default" and value not in EFFORT_LEVELS:
            host.say(f"Usage: /model effort {'|'.join(EFFORT_LEVELS)}|default", "error")
            return
        choice = ThinkingChoice(
            choice.enabled, choice.budget, None if value == "default" else value
        )
    session.loop.thinking = choice
    host.refresh_status()
    host.say(thinking_summary(session))
