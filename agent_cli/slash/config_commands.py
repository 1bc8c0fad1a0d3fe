"""``/config``: the effective settings and where each comes from; in the app a screen that can
change a few of them (``agent_cli.tui.screens.config``), elsewhere the listing as text."""

from __future__ import annotations

from agent_cli.slash.registry import SlashCommand, SlashHost
from agent_cli.slash.settings_view import settings_lines

__all__ = ["CONFIG_COMMANDS", "open_view"]


def open_view(host: SlashHost, name: str) -> bool:
    """Open the app's screen ``name`` (``config``, ``permissions``); False where there is none
    (print mode)."""
    opener = getattr(host, "open_view", None)
    return bool(host.interactive and callable(opener) and opener(name))


async def _config(host: SlashHost, args: str) -> None:
    if args.strip():
        host.say("usage: /config (to set a value: nerve config set [-g] KEY VALUE)", "error")
        return
    if open_view(host, "config"):
        return
    host.say("\n".join(settings_lines(getattr(host.session, "settings", None))))


CONFIG_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("config", "the effective settings and their files; change a few", _config),
)
