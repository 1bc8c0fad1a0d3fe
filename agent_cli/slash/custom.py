"""Commands about what users write in ``.claude/``: their own commands, ``/agents``, ``/init``,
``/memory``, and ``# note`` lines.

``registry_for(host)`` is the table a host runs: the built-ins plus the session's custom
commands and skills (``agent_cli.customize.commands``), each a prompt command whose handler
hands ``/name args`` to the host as the next turn; the session expands it
(``agent_cli.session.custom``). A custom command never replaces a built-in of the same name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_cli.slash.registry import SlashCommand, SlashHost, SlashRegistry

__all__ = [
    "CUSTOMIZE_COMMANDS",
    "is_memory_note",
    "mcp_prompt_commands",
    "registry_for",
    "remember_note",
    "session_commands",
]

# The last table built, with what it was built for (a session, or a cwd without one).
_LAST: list[tuple[object, SlashRegistry]] = []


def _submitter(name: str) -> Any:
    async def submit(host: SlashHost, args: str) -> None:
        await host.submit_prompt(f"/{name} {args.strip()}".rstrip())

    return submit


def session_commands(commands: list[Any]) -> list[SlashCommand]:
    """Slash commands for ``customize.commands.PromptCommand`` objects."""
    return [
        SlashCommand(
            c.name,
            f"{c.description} ({c.source}{', skill' if c.kind == 'skill' else ''})".strip(),
            _submitter(c.name),
            argument_hint=c.argument_hint,
            expands_to_prompt=True,
        )
        for c in commands
    ]


def mcp_prompt_commands(session: Any) -> list[SlashCommand]:
    """``/mcp__server__prompt`` for each prompt of the session's connected MCP servers."""
    prompts = getattr(session, "mcp_prompts", None)
    if not callable(prompts):
        return []
    return [
        # The session expands it when the turn runs (``agent_cli.session.custom.run_prompt``).
        SlashCommand(
            name, description, _submitter(name), argument_hint=hint, expands_to_prompt=True
        )
        for name, description, hint in prompts()
    ]


def _session(host: SlashHost) -> Any:
    try:
        return host.session
    except Exception:  # still starting, or print mode without one
        return None


def _commands_of(session: Any) -> Any:
    if session is None:  # `nerve -p /help` needs no session: read them from disk
        from agent_cli.customize.commands import load_prompt_commands

        return load_prompt_commands(Path.cwd()).user_commands()
    commands = getattr(session, "custom_commands", None)
    return commands() if callable(commands) else []


def registry_for(host: SlashHost) -> SlashRegistry:
    """The built-ins and the host's session's own commands (module docstring)."""
    from agent_cli.slash.builtin import default_registry

    session = _session(host)
    mcp = mcp_prompt_commands(session)
    # MCP prompts arrive when their servers connect: the table is rebuilt when they change.
    owner: object = (
        session if session is not None else str(Path.cwd()),
        tuple(c.name for c in mcp),
    )
    if _LAST and _LAST[0][0] == owner:
        return _LAST[0][1]
    extra = [*session_commands(list(_commands_of(session))), *mcp]
    registry, _ = default_registry().layered(extra)
    _LAST[:] = [(owner, registry)]
    return registry


# -- /agents ---------------------------------------------------------------------------------


def _where(agent: Any, cwd: Path | None) -> str:
    path = getattr(agent, "path", None)
    level = {"userSettings": "user", "projectSettings": "project"}.get(agent.source, agent.source)
    if path is None:
        return level
    shown = str(path)
    if cwd is not None and Path(path).is_relative_to(cwd):
        shown = os.path.relpath(path, cwd)
    return f"{level}: {shown}"


async def _agents(host: SlashHost, args: str) -> None:
    definitions = getattr(host.session, "agent_definitions", None)
    if not callable(definitions):
        host.say("Sub-agents are not available in this session.")
        return
    agents = list(definitions())
    cwd = getattr(host.session, "cwd", None)
    lines = [f"Sub-agent types ({len(agents)}):"]
    for a in sorted(agents, key=lambda a: (a.source != "built-in", a.name.lower())):
        lines.append(f"{a.name:<20} ({_where(a, cwd)})  {a.description[:90]}")
    lines.append("Add your own in .claude/agents/*.md or .nerve/agents/*.md.")
    host.say("\n".join(lines))


# -- /init -----------------------------------------------------------------------------------


async def _init(host: SlashHost, args: str) -> None:
    await host.submit_prompt(f"/init {args}".rstrip())


# -- /memory and # notes ---------------------------------------------------------------------


def _cwd(host: SlashHost) -> Path:
    cwd = getattr(_session(host), "cwd", None)
    return Path(cwd) if cwd is not None else Path.cwd()


async def _memory(host: SlashHost, args: str) -> None:
    from agent_cli.customize.memory_edit import editable_memory_files

    targets = editable_memory_files(_cwd(host))

    async def edit(index: int | None) -> None:
        if index is None:
            host.say("No memory file opened.")
            return
        path = targets[index].path
        problem = await host.edit_file(path)
        if problem is not None:
            host.say(f"Could not edit {path}: {problem}", "error")
            return
        host.say(f"Edited {path}. Memory files are read when a session starts.")

    host.choose("Open which memory file in $EDITOR?", [t.describe() for t in targets], edit)


def is_memory_note(text: str) -> bool:
    """``# note``: one line, a hash, a space, some text (``#123 fails`` is a prompt)."""
    return "\n" not in text.strip() and text.startswith("# ") and bool(text[2:].strip())


async def remember_note(host: SlashHost, text: str) -> None:
    """Ask which memory file the note goes to, then append it there."""
    from agent_cli.customize.memory_edit import append_note, memory_targets

    note = text.strip()[1:].strip()
    targets = memory_targets(_cwd(host))

    async def save(index: int | None) -> None:
        if index is None:
            host.say("Note not saved.")
            return
        path = targets[index].path
        try:
            append_note(path, note)
        except (OSError, ValueError) as exc:
            host.say(f"Could not save the note to {path}: {exc}", "error")
            return
        host.say(f"Noted in {path}.")

    host.choose("Save this note to which memory file?", [t.describe() for t in targets], save)


CUSTOMIZE_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("agents", "list sub-agent types and where each is defined", _agents),
    SlashCommand(
        "init",
        "write a starter AGENTS.md (or improve CLAUDE.md) for this repository",
        _init,
        expands_to_prompt=True,
    ),
    SlashCommand("memory", "open a memory file in $EDITOR", _memory, interactive_only=True),
)
