"""The slash-command table and the host a front end gives each command.

A command is data (name, description, where it can run) plus a handler that talks only to a
:class:`SlashHost`: the session port, a place to print, and the few UI actions a front end may
refuse (print mode has no picker and no conversation view). The TUI and print mode each
implement the host; neither owns the commands.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tools.records import datarecord

if TYPE_CHECKING:  # annotations only: the TUI's first frame does not load the session port
    from agent_cli.session.port import SessionPort

__all__ = ["Handler", "SlashCommand", "SlashHost", "SlashRegistry", "parse_slash"]


class SlashHost(Protocol):
    """What a running command may use. ``interactive`` is False in print mode."""

    interactive: bool

    @property
    def session(self) -> SessionPort: ...

    @property
    def bypass_available(self) -> bool:
        """Whether ``/mode bypassPermissions`` may be chosen (enabled at launch)."""
        ...

    def say(self, text: str, level: str = "info") -> None:
        """Show a line to the user (``info`` or ``error``)."""
        ...

    def refresh_status(self) -> None: ...

    async def clear_conversation(self) -> None:
        """Start a new conversation and empty the view of the old one."""
        ...

    async def resume_session(self, session_id: str) -> None: ...

    async def choose_session(self, sessions: list[dict[str, Any]]) -> None:
        """Let the user pick one of ``sessions`` to resume (a picker in the TUI)."""
        ...

    def exit(self, code: int = 0) -> None: ...

    async def submit_prompt(self, text: str) -> None:
        """Send ``text`` to the model as the user's next turn (a custom command, ``/init``)."""
        ...

    def choose(
        self,
        title: str,
        options: list[str],
        then: Callable[[int | None], Awaitable[None]],
        initial: int = 0,
    ) -> None:
        """Let the user pick one of ``options`` (a picker in the TUI, ``initial`` highlighted);
        ``then`` gets its index, or None when the user cancels or the host cannot ask."""
        ...

    async def edit_file(self, path: Path) -> str | None:
        """Open ``path`` in the user's ``$EDITOR``; None when done, else what went wrong."""
        ...

    async def stream(self, events: AsyncIterator[Any]) -> None:
        """Show a long operation's events (``/compact``) as they come; the app lets Esc
        interrupt it and stays responsive meanwhile."""
        ...

    async def choose_rewind(self, points: list[Any]) -> None:
        """Let the user pick a prompt (``RewindPoint``) and what to restore (a picker)."""
        ...


Handler = Callable[[SlashHost, str], Awaitable[None]]


@datarecord(frozen=True, slots=True)
class SlashCommand:
    """One command. ``needs_session``: waits until the session is ready; ``interactive_only``:
    refused in print mode (it needs a screen or ends the app)."""

    name: str
    description: str
    handler: Handler
    aliases: tuple[str, ...] = ()
    needs_session: bool = True
    interactive_only: bool = False
    argument_hint: str = ""
    # The command is a prompt for the model (a custom command, a skill, /init): the session
    # expands ``/name args`` when it runs the turn (``agent_cli.session.custom``).
    expands_to_prompt: bool = False


@datarecord
class SlashRegistry:
    """Commands by name (and alias), in the order they were added."""

    _commands: dict[str, SlashCommand] = field(default_factory=dict)
    _names: dict[str, SlashCommand] = field(default_factory=dict)

    def add(self, command: SlashCommand) -> None:
        for name in (command.name, *command.aliases):
            if name in self._names:
                raise ValueError(f"slash command /{name} is already registered")
        self._commands[command.name] = command
        for name in (command.name, *command.aliases):
            self._names[name] = command

    def extend(self, commands: Iterable[SlashCommand]) -> None:
        for command in commands:
            self.add(command)

    def get(self, name: str) -> SlashCommand | None:
        return self._names.get(name)

    def commands(self) -> list[SlashCommand]:
        return list(self._commands.values())

    def descriptions(self) -> dict[str, str]:
        """Every name and alias with its description (for ``/`` completion)."""
        return {
            name: f"{command.argument_hint} {command.description}".strip()
            for name, command in self._names.items()
        }

    def layered(self, extra: Iterable[SlashCommand]) -> tuple[SlashRegistry, list[str]]:
        """A new registry: these commands, then ``extra`` (a session's own commands). An extra
        command whose name is taken is left out; the names left out are returned."""
        out = SlashRegistry(dict(self._commands), dict(self._names))
        skipped = []
        for command in extra:
            try:
                out.add(command)
            except ValueError:
                skipped.append(command.name)
        return out, skipped

    async def run(self, host: SlashHost, name: str, args: str) -> None:
        """Run ``/name args``; an unknown name or one the host cannot run is reported."""
        command = self.get(name)
        if command is None:
            host.say(f"Unknown command /{name}. Type /help for the list.", "error")
            return
        if command.interactive_only and not host.interactive:
            host.say(f"/{name} works only in the interactive app.", "error")
            return
        await command.handler(host, args)


def parse_slash(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args); None when the text is not a slash command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, args = stripped[1:].partition(" ")
    return name.lower(), args.strip()
