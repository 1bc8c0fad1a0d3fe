"""Commands about what users write in ``.claude/``: their own commands, ``/agents``, ``/init``,
``/memory``, and ``# note`` lines.

``session_commands`` makes a slash command of each custom command and skill of the session
(``agent_cli.customize.commands``), ``mcp_prompt_commands`` of each prompt of its MCP servers:
a prompt command whose handler hands ``/name args`` to the host as the next turn; the session
expands it (``agent_cli.session.custom``). ``builtin.registry_for`` adds them to the built-ins.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_cli.slash.registry import SlashCommand, SlashHost

__all__ = [
    "CUSTOMIZE_COMMANDS",
    "is_memory_note",
    "mcp_prompt_commands",
    "remember_note",
    "session_commands",
    "session_of",
]


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


def session_of(host: SlashHost) -> Any:
    """The host's session, or None while it is still starting (or in print mode without one)."""
    try:
        return host.session
    except Exception:  # still starting, or print mode without one
        return None


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
    cwd = getattr(session_of(host), "cwd", None)
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
