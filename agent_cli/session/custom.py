"""A session's customizations: custom commands and skills, path-scoped rules, ``/init``.

Wiring (from ``build``): the Skill tool's catalog and the Read tool's file-context provider go
in ``ctx.options.services``; the skills the model may load are listed in the frozen system prompt;
the Skill tool is dropped from the pool when there is nothing to load.

A turn whose prompt is ``/name args`` for a custom command, a skill or ``/init`` runs as
``run_prompt`` says: the command's ``allowed-tools`` become allow rules for this turn only
(``RuleSource.COMMAND``; not from an untrusted project), its ``!`cmd` `` lines and ``@path``
includes run through the pipeline with the session's permission handler (the TUI's prompt; in
print mode an ask is a denial), and the model gets what Claude Code sends: the
``<command-name>`` header and the expanded body. A denied command line stops the turn before
anything is sent. ``model`` frontmatter switches the model for the turn. When any turn ends,
the turn's ``COMMAND`` rules (a command's, or a skill's the model loaded) are dropped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.customize.catalog import CommandCatalog, listing_for_prompt
from agent_cli.customize.commands import CommandSet, PromptCommand, load_prompt_commands
from agent_cli.customize.expand import ToolRunner
from agent_cli.customize.rules import PathRules, load_rules
from agent_cli.loop.events import AgentEvent, ErrorEvent, Notice, TurnFinished
from permissions.types import PermissionRule, RuleBehavior, RuleSource
from tools.base import Tool
from tools.context import AbortSignal
from tools.pipeline.types import CallOutcome, ToolCall

if TYPE_CHECKING:
    from agent_cli.session.agent_session import AgentSession

__all__ = [
    "drop_turn_rules",
    "find_prompt_command",
    "load_commands",
    "pool_for_commands",
    "run_prompt",
    "wire_customizations",
]

BUILTIN_PROMPTS = ("init",)


def load_commands(
    cwd: Path, *, project_trusted: bool, sources: Collection[str] | None = None
) -> CommandSet:
    """The session's custom commands and skills (warnings in ``.warnings``); ``sources``:
    ``--setting-sources`` (only the user's and/or the project's)."""
    return load_prompt_commands(cwd, project_trusted=project_trusted, sources=sources)


def pool_for_commands(pool: Sequence[Tool[Any]], commands: CommandSet) -> list[Tool[Any]]:
    """The pool without the Skill tool when the model has nothing to load with it."""
    if commands.model_commands():
        return list(pool)
    return [t for t in pool if t.name != "Skill"]


def wire_customizations(session: AgentSession, commands: CommandSet, project_dir: Path) -> None:
    """Catalog, file-context provider and the prompt's skill listing (module docstring)."""
    session.commands = commands
    services = session.ctx.options.services
    services.skills = CommandCatalog(
        commands, project_dir=project_dir, session_id=lambda: session.session_id
    )
    sources = session.options.setting_sources
    rules, _ = load_rules(session.cwd, sources=sources)  # warnings came with the memory files
    services.file_context = PathRules(rules)
    listing = listing_for_prompt(commands)
    if listing and any(t.name == "Skill" for t in session.ctx.options.tools):
        session.loop.system_prompt += "\n\n" + listing


def _parse(prompt: str) -> tuple[str, str] | None:
    text = prompt.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, args = text[1:].partition(" ")
    if "\n" in name:
        name, _, rest = name.partition("\n")
        args = f"{rest} {args}".strip()
    return name.lower(), args.strip()


def find_prompt_command(session: Any, prompt: str) -> tuple[PromptCommand, str] | None:
    """The prompt command ``prompt`` invokes (a custom command, a skill, ``/init``), if any."""
    parsed = _parse(prompt)
    if parsed is None:
        return None
    name, args = parsed
    if name in BUILTIN_PROMPTS:
        from agent_cli.customize.init import init_command

        return init_command(session.cwd), args
    commands: CommandSet | None = getattr(session, "commands", None)
    command = commands.get(name) if commands is not None else None
    if command is None or not command.user_invocable:
        return None
    return command, args


def _add_rules(session: AgentSession, rules: Sequence[PermissionRule]) -> None:
    ctx = session.loop.ctx
    perms = replace(ctx.permissions, rules=(*ctx.permissions.rules, *rules))
    session.loop.ctx = replace(ctx, permissions=perms)


def drop_turn_rules(session: AgentSession) -> None:
    """End of a turn: what a command or a loaded skill allowed for it no longer holds."""
    ctx = session.loop.ctx
    keep = tuple(r for r in ctx.permissions.rules if r.source is not RuleSource.COMMAND)
    if len(keep) != len(ctx.permissions.rules):
        session.loop.ctx = replace(ctx, permissions=replace(ctx.permissions, rules=keep))


def _turn_rules(session: AgentSession, command: PromptCommand) -> list[PermissionRule]:
    from permissions.rules import RuleSyntaxError, make_rule

    rules = []
    for text in command.allowed_tools if command.trusted else ():
        try:
            rules.append(make_rule(text, RuleBehavior.ALLOW, RuleSource.COMMAND, session.cwd))
        except RuleSyntaxError as exc:
            session.warnings.append(f"/{command.name}: allowed-tools rule {text!r} ignored: {exc}")
    if command.skill_dir is not None:  # the files beside SKILL.md, for the session
        spec = f"/{command.skill_dir}/**".replace("///", "//")
        rules.append(
            make_rule(f"Read({spec})", RuleBehavior.ALLOW, RuleSource.SESSION, session.cwd)
        )
    if command.kind == "builtin" and session.approvals.attached:
        # /init: the user approves the file with its diff, whatever the mode.
        spec = f"/{command.path}".replace("///", "//")
        rules.append(make_rule(f"Edit({spec})", RuleBehavior.ASK, RuleSource.COMMAND, session.cwd))
    return rules


def _turn_model(session: AgentSession, command: PromptCommand) -> str | None:
    if not command.model or command.model == "inherit":
        return None
    try:
        # aliases remapped by the session environment, like every other model choice
        return session.models.resolve(command.model)
    except ValueError as exc:
        session.warnings.append(f"/{command.name}: model {command.model!r} not used: {exc}")
        return None


def _keep_approvals(session: AgentSession, outcomes: Sequence[CallOutcome]) -> list[str]:
    """A command line the user approved with "always": saved like any approval. Nothing else a
    command line did carries over (a ``cd`` in it does not move the session)."""
    from tools.pipeline.permission import session_rules_modifier

    notes = []
    for outcome in outcomes:
        if outcome.rules_to_persist:
            session.loop.ctx = session_rules_modifier(outcome.rules_to_persist)(session.loop.ctx)
            notes += session.permissions.persist_always(outcome.rules_to_persist)
    return notes


def _failed(message: str, stop_reason: str = "blocked") -> list[AgentEvent]:
    finished = TurnFinished(
        stop_reason=stop_reason, num_turns=0, usage={}, cost_usd=0.0, is_error=True, result_text=""
    )
    return [ErrorEvent(message), finished]


def _tool_runner(session: AgentSession, events: list[Any]) -> tuple[AbortSignal, ToolRunner]:
    """Tool calls made before the turn (a command's lines and includes, a prompt's mentions):
    the whole pipeline, with a fresh signal (the last turn's may be aborted; Esc stops them)."""
    from agent_cli.customize.expand import new_call_id
    from agent_cli.loop.turn_context import context_for_turn
    from tools.pipeline.steps import run_tool_call

    signal = AbortSignal()
    session.loop.ctx.state.abort = signal
    session.expansion_abort = signal

    async def run_tool(tool: str, tool_input: dict[str, Any]) -> CallOutcome:
        ctx = context_for_turn(session.loop, events.append)
        return await run_tool_call(ToolCall(new_call_id(), tool, tool_input), ctx)

    return signal, run_tool


async def _plain_turn(
    session: AgentSession, prompt: str, images: Sequence[dict[str, Any]]
) -> AsyncIterator[AgentEvent]:
    """The prompt as typed, with what its ``@path`` mentions attach (``session.mentions``) and
    the images pasted with it."""
    from agent_cli.session.mentions import attach_mentions

    events: list[Any] = []
    signal, run_tool = _tool_runner(session, events)
    try:
        attached = await attach_mentions(
            prompt,
            run_tool=run_tool,
            dirs=session.ctx.permissions.working_dirs,
            home=Path.home(),
        )
    finally:
        session.expansion_abort = None
    for event in events:
        yield event
    for note in _keep_approvals(session, attached.outcomes):
        yield Notice(note, "warning")
    for line in attached.shown:
        yield Notice(line)
    for note in attached.notes:
        yield Notice(note, "warning")
    if signal.aborted:
        for event in _failed("interrupted before the prompt was sent", "aborted"):
            yield event
        return
    content = attached.content
    if images:
        content = [*(content or [{"type": "text", "text": prompt}]), *images]
    async for event in session.loop.run_turn(prompt, content=content):
        yield event


async def _command_turn(
    session: AgentSession,
    command: PromptCommand,
    args: str,
    prompt: str,
    images: Sequence[dict[str, Any]],
) -> AsyncIterator[AgentEvent]:
    from agent_cli.customize.expand import expand_command
    from config import find_project_root

    if command.allowed_tools and not command.trusted:
        yield Notice(
            f"/{command.name}: allowed-tools ({', '.join(command.allowed_tools)}) not applied "
            "until you trust this folder",
            "warning",
        )
    _add_rules(session, _turn_rules(session, command))
    model = _turn_model(session, command)
    events: list[Any] = []
    signal, run_tool = _tool_runner(session, events)
    try:
        expansion = await expand_command(
            command,
            args,
            run_tool=run_tool,
            cwd=session.cwd,
            project_dir=find_project_root(session.cwd),
            session_id=session.session_id,
        )
    finally:
        session.expansion_abort = None
    for event in events:
        yield event
    approvals = _keep_approvals(session, expansion.outcomes)
    for note in [*approvals, *expansion.notes, *session.take_warnings()]:
        yield Notice(note, "warning")
    if signal.aborted:
        failed = _failed(f"/{command.name} was interrupted before it was sent", "aborted")
    else:
        failed = [] if expansion.error is None else _failed(expansion.error)
    for event in failed:
        yield event
    if failed:
        return
    content = _command_content(command, args, expansion.text, images)
    with session.models.for_turn(model):
        async for event in session.loop.run_turn(prompt, content=content):
            yield event


def _command_content(
    command: PromptCommand, args: str, text: str, images: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """What the model gets for a command: Claude Code's ``<command-name>`` header, then the
    expanded body (a skill's under the line naming its directory), then the pasted images."""
    from agent_cli.customize.expand import command_header

    body = text
    if command.skill_dir is not None:
        body = f"Base directory for this skill: {command.skill_dir}\n\n{body}"
    return [
        {"type": "text", "text": command_header(command.name, args)},
        {"type": "text", "text": body},
        *images,
    ]


async def run_prompt(
    session: AgentSession, prompt: str, images: Sequence[dict[str, Any]] = ()
) -> AsyncIterator[AgentEvent]:
    """One user turn: a prompt command expanded (module docstring), or the prompt as typed;
    ``images`` (pasted with Ctrl+V) follow the prompt's text."""
    found = find_prompt_command(session, prompt)
    try:
        parsed = _parse(prompt)
        if found is None and parsed is not None and parsed[0].startswith("mcp__"):
            # ``/mcp__server__prompt args``: the server's prompt is the turn.
            try:
                prompt = await session.mcp.prompt(parsed[0], parsed[1])
            except KeyError:
                pass  # no such MCP prompt: the text goes to the model as typed
            except Exception as exc:
                for event in _failed(f"/{parsed[0]}: {exc.args[0] if exc.args else exc}"):
                    yield event
                return
        if found is None:
            async for event in _plain_turn(session, prompt, images):
                yield event
        else:
            async for event in _command_turn(session, found[0], found[1], prompt, images):
                yield event
    finally:
        drop_turn_rules(session)
