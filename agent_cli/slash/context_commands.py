"""``/compact``, ``/context`` and ``/rewind``: the context window and the way back.

``/compact`` streams the session's compaction through the host (the TUI shows its progress and
Esc cancels it; print mode prints the outcome). ``/rewind`` needs a picker, so only the
interactive app offers it (Esc Esc on an empty prompt opens it too).
"""

from __future__ import annotations

from agent_cli.slash.context_view import context_text
from agent_cli.slash.registry import SlashCommand, SlashHost

__all__ = ["CONTEXT_COMMANDS"]


async def _compact(host: SlashHost, args: str) -> None:
    compact = getattr(host.session, "compact", None)
    if not callable(compact):
        host.say("Compaction is not available in this session.", "error")
        return
    await host.stream(compact(args))


async def _context(host: SlashHost, args: str) -> None:
    usage = getattr(host.session, "context_usage", None)
    if not callable(usage):
        host.say("Context usage is not available in this session.", "error")
        return
    host.say(context_text(usage()))


async def _rewind(host: SlashHost, args: str) -> None:
    points = getattr(host.session, "rewind_points", None)
    if not callable(points):
        host.say("Rewind is not available in this session.", "error")
        return
    found = points()
    if not found:
        host.say("Nothing to rewind to: this conversation has no prompt yet.")
        return
    await host.choose_rewind(found)


CONTEXT_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "compact",
        "summarise the conversation to free context (optional focus instructions)",
        _compact,
        argument_hint="[instructions]",
    ),
    SlashCommand("context", "show what fills the context window", _context),
    SlashCommand(
        "rewind",
        "return to an earlier prompt: restore the conversation, the files, or both",
        _rewind,
        aliases=("checkpoint", "undo"),
        interactive_only=True,
    ),
)
