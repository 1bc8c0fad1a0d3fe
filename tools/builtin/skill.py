"""Skill: the model loads a skill (or a custom command) by name and gets its instructions.

Skills and custom commands are what users write in ``.claude/skills`` and ``.claude/commands``;
``tools`` cannot read them (``agent_cli`` owns that), so the tool declares a port,
:class:`SkillCatalog`, and finds its implementation in ``ctx.options.services.skills``
(``agent_cli.customize.catalog`` provides it; the session lists the skills in the system
prompt). Loading expands the body for ``args``: its ``!`cmd` `` lines go through the pipeline
as Bash calls of their own, so a skill can never run what the user's rules would not allow.

Permissions: the call is read-only (it adds text to the conversation), so it runs without a
prompt unless a rule says otherwise: ``Skill`` (every skill), ``Skill(name)`` or
``Skill(name *)`` (with any arguments) as deny, ask or allow rules. What a skill's
``allowed-tools`` grant holds until the end of the user's turn (``RuleSource.COMMAND`` rules,
which the session drops when the turn ends); the skill's folder becomes readable for the rest
of the session, so the model can open the files beside ``SKILL.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import PermissionRule, RuleBehavior, RuleSource
from tools.base import ProgressFn, build_tool
from tools.context import ToolUseContext
from tools.records import datarecord
from tools.result import ToolResult, ValidationError

__all__ = [
    "SKILL",
    "TOOLS",
    "LoadedSkill",
    "SkillCatalog",
    "SkillInfo",
    "SkillInput",
    "skill_rules",
]

_DESCRIPTION = """\
Load a skill: the user's or the project's written instructions for a kind of task (and custom \
slash commands). The skills available are listed in the system prompt with what each is for; \
when a task matches one, load it before you start and follow what it says.

- skill: the skill's name exactly as listed (e.g. "pdf" or "frontend:component").
- args: optional arguments, as a user would type them after /name.
Files beside a skill's SKILL.md (scripts, references) can be read after loading it."""


class SkillInput(BaseModel):
    """The Skill tool's input (Claude Code's ``Skill``)."""

    model_config = ConfigDict(extra="ignore")

    skill: str = Field(min_length=1, description='The skill name, e.g. "pdf" or "review"')
    args: str | None = Field(None, description="Optional arguments for the skill")


@datarecord(frozen=True, slots=True)
class SkillInfo:
    """A skill the model may load: its name and what it is for."""

    name: str
    description: str
    kind: str = "skill"  # "skill" | "command"


@datarecord(frozen=True, slots=True)
class LoadedSkill:
    """A loaded skill: its expanded text, or ``error`` (nothing loaded).

    ``allowed_tools`` are rule strings allowed until the user's turn ends; ``read_dirs`` become
    readable (``Read(//dir/**)``) for the session.
    """

    text: str = ""
    allowed_tools: tuple[str, ...] = ()
    read_dirs: tuple[Path, ...] = ()
    error: str | None = None


@runtime_checkable
class SkillCatalog(Protocol):
    """The port the Skill tool calls (implemented in ``agent_cli.customize.catalog``)."""

    def skills(self) -> Sequence[SkillInfo]:
        """What the model may load."""
        ...

    async def load(self, name: str, args: str, ctx: ToolUseContext) -> LoadedSkill:
        """Expand the skill for ``args`` (its commands go through the pipeline under ``ctx``)."""
        ...


def _catalog(ctx: ToolUseContext) -> SkillCatalog | None:
    return ctx.options.services.skills


def _find(catalog: SkillCatalog, name: str) -> SkillInfo | None:
    wanted = name.strip().lstrip("/").lower()
    return next((s for s in catalog.skills() if s.name.lower() == wanted), None)


def _backfill(inp: SkillInput, _ctx: ToolUseContext) -> SkillInput:
    # ``Skill(review)`` rules match ``/review`` as the model may write it.
    name = inp.skill.strip().lstrip("/")
    return inp if name == inp.skill else inp.model_copy(update={"skill": name})


async def _validate(inp: SkillInput, ctx: ToolUseContext) -> ValidationError | None:
    catalog = _catalog(ctx)
    if catalog is None:
        return ValidationError("Skills are not available in this session", "no_skills")
    if _find(catalog, inp.skill) is None:
        names = ", ".join(s.name for s in catalog.skills()) or "(none)"
        return ValidationError(
            f"Unknown skill {inp.skill!r}. Available skills: {names}", "unknown_skill"
        )
    return None


def skill_rules(loaded: LoadedSkill, cwd: Path) -> tuple[PermissionRule, ...]:
    """The rules loading a skill adds: its ``allowed-tools`` for the turn, its folder for reads.
    A malformed rule string is skipped (the catalog already warned when it loaded the file)."""
    from permissions.rules import RuleSyntaxError, make_rule

    rules: list[PermissionRule] = []
    for text in loaded.allowed_tools:
        try:
            rules.append(make_rule(text, RuleBehavior.ALLOW, RuleSource.COMMAND, cwd))
        except RuleSyntaxError:
            continue
    for folder in loaded.read_dirs:
        spec = f"/{folder}/**".replace("///", "//")
        rules.append(make_rule(f"Read({spec})", RuleBehavior.ALLOW, RuleSource.SESSION, cwd))
    return tuple(rules)


async def _call(inp: SkillInput, ctx: ToolUseContext, progress: ProgressFn) -> ToolResult:
    catalog = _catalog(ctx)
    info = _find(catalog, inp.skill) if catalog is not None else None
    if catalog is None or info is None:  # validated already; a changed context fails closed
        return ToolResult(f"Unknown skill {inp.skill!r}", is_error=True)
    loaded = await catalog.load(info.name, inp.args or "", ctx)
    if loaded.error is not None:
        return ToolResult(loaded.error, is_error=True)
    added = skill_rules(loaded, ctx.cwd)

    def grant(context: ToolUseContext) -> ToolUseContext:
        have = set(context.permissions.rules)
        new = tuple(r for r in added if r not in have)
        perms = dataclasses.replace(context.permissions, rules=(*context.permissions.rules, *new))
        return dataclasses.replace(context, permissions=perms)

    return ToolResult(loaded.text, context_modifier=grant if added else None)


def _render_call(inp: SkillInput) -> str:
    return f"{inp.skill} {inp.args}".strip() if inp.args else inp.skill


def _render_result(data: Any) -> str:
    text = str(data)
    return f"Loaded skill ({len(text.splitlines())} lines)"


SKILL = build_tool(
    name="Skill",
    input_model=SkillInput,
    call=_call,
    description=_DESCRIPTION,
    search_hint="skill instructions custom command playbook load",
    is_read_only=True,
    is_concurrency_safe=False,  # it changes the rules later calls see
    validate_input=_validate,
    backfill_input=_backfill,
    render_call=_render_call,
    render_result=_render_result,
    max_result_size_chars=100_000,
)

TOOLS = (SKILL,)
