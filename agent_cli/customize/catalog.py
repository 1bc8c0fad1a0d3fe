"""The Skill tool's catalog: the session's skills and commands the model may load.

Implements ``tools.builtin.skill.SkillCatalog`` over a :class:`CommandSet`. Loading expands the
body like a typed command (``agent_cli.customize.expand``); its ``!`cmd` `` lines run through
the pipeline under the caller's context with the skill's ``allowed-tools`` already allowed, so
what a skill runs is exactly what its rules and the user's permit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_cli.customize.commands import CommandSet, PromptCommand
from tools.builtin.skill import LoadedSkill, SkillInfo, skill_rules
from tools.context import ToolUseContext
from tools.pipeline.types import CallOutcome, ToolCall

__all__ = ["CommandCatalog", "listing_for_prompt"]

MAX_LISTED = 100


def listing_for_prompt(commands: CommandSet) -> str:
    """The system prompt's section naming what the Skill tool can load ("" when nothing)."""
    offered = commands.model_commands()[:MAX_LISTED]
    if not offered:
        return ""
    lines = [f"- {c.name}: {c.description or '(no description)'}" for c in offered]
    return (
        "Skills and custom commands you can load with the Skill tool (load one when the task "
        "matches what it is for):\n" + "\n".join(lines)
    )


class CommandCatalog:
    """``SkillCatalog`` over the session's commands (``session_id`` read when a skill loads)."""

    def __init__(
        self,
        commands: CommandSet,
        *,
        project_dir: Path,
        session_id: Callable[[], str] = lambda: "",
        home: Path | None = None,
    ) -> None:
        self.commands = commands
        self.project_dir = project_dir
        self.session_id = session_id
        self.home = home

    def skills(self) -> list[SkillInfo]:
        return [SkillInfo(c.name, c.description, c.kind) for c in self.commands.model_commands()]

    def granted(self, command: PromptCommand) -> tuple[str, ...]:
        """The ``allowed-tools`` that apply (none from an untrusted project)."""
        return command.allowed_tools if command.trusted else ()

    async def load(self, name: str, args: str, ctx: ToolUseContext) -> LoadedSkill:
        from agent_cli.customize.expand import expand_command, new_call_id

        command = self.commands.get(name)
        if command is None or not command.model_invocable:
            return LoadedSkill(error=f"Unknown skill {name!r}")
        if command.allowed_tools and not command.trusted:
            ctx.callbacks.notify(
                f"Skill {name}: allowed-tools ({', '.join(command.allowed_tools)}) not applied "
                "until you trust this folder"
            )
        allowed = self.granted(command)
        read_dirs = (command.skill_dir,) if command.skill_dir is not None else ()
        loaded = LoadedSkill(allowed_tools=allowed, read_dirs=read_dirs)
        rules = skill_rules(loaded, ctx.cwd)
        perms = dataclasses.replace(ctx.permissions, rules=(*ctx.permissions.rules, *rules))
        run_ctx = dataclasses.replace(ctx, permissions=perms)

        async def run_tool(tool: str, tool_input: dict[str, Any]) -> CallOutcome:
            from tools.pipeline.steps import run_tool_call

            return await run_tool_call(ToolCall(new_call_id(), tool, tool_input), run_ctx)

        expansion = await expand_command(
            command,
            args,
            run_tool=run_tool,
            cwd=ctx.cwd,
            home=self.home,
            project_dir=self.project_dir,
            session_id=self.session_id(),
        )
        if expansion.error is not None:
            return LoadedSkill(error=expansion.error)
        head = f'Loaded {command.kind} "{command.name}" from {command.path}'
        if command.skill_dir is not None:
            head += f"\nBase directory for this skill: {command.skill_dir}"
        notes = "".join(f"\n({note})" for note in expansion.notes)
        return dataclasses.replace(loaded, text=f"{head}{notes}\n\n{expansion.text}")
