"""The commands Nerve ships, and the table a host runs.

Each handler is thin: it calls the session and prints the answer. ``default_registry()`` holds
the built-ins; ``registry_for(host)`` adds the host's session's own commands: its custom commands
and skills and its MCP servers' prompts (``custom.session_commands``,
``custom.mcp_prompt_commands``). A command of the session never replaces a built-in of the same
name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.slash.config_commands import CONFIG_COMMANDS, open_view
from agent_cli.slash.context_commands import CONTEXT_COMMANDS
from agent_cli.slash.custom import (
    CUSTOMIZE_COMMANDS,
    mcp_prompt_commands,
    session_commands,
    session_of,
)
from agent_cli.slash.registry import SlashCommand, SlashHost, SlashRegistry
from agent_cli.slash.sandbox import SANDBOX_COMMAND
from agent_cli.slash.status_commands import STATUS_COMMANDS
from agent_cli.slash.text import checklist, format_cost, format_tokens, mode_label, rule_lines
from agent_cli.slash.thinking_commands import OPTION_WORDS, model_option
from agent_cli.slash.workspace_commands import WORKSPACE_COMMANDS

__all__ = ["BUILTIN_COMMANDS", "HELP_KEYS", "default_registry", "registry_for"]

HELP_KEYS = [
    "Enter send · Ctrl+J newline · Up/Down history · Tab complete",
    "Shift+Tab cycle permission mode · Esc interrupt · Ctrl+C clear input / interrupt",
    "Ctrl+D twice exit · !cmd run a shell command · @path mention a file",
]
BEHAVIORS = ("allow", "ask", "deny")


async def _help(host: SlashHost, args: str) -> None:
    registry = registry_for(host)  # with the session's custom commands and skills
    rows = [c for c in registry.commands() if host.interactive or not c.interactive_only]
    lines = [
        f"/{c.name:<12} {' '.join(filter(None, (c.argument_hint, c.description)))}" for c in rows
    ]
    for c in rows:
        lines += [f"/{alias:<12} {c.description}" for alias in c.aliases]
    keys = ["", *HELP_KEYS] if host.interactive else []
    host.say("\n".join(["Commands:", *lines, *keys]))


async def _clear(host: SlashHost, args: str) -> None:
    await host.clear_conversation()
    host.say("Started a new conversation.")
    host.refresh_status()


async def _resume(host: SlashHost, args: str) -> None:
    if args:
        await host.resume_session(args)
        return
    sessions = host.session.list_sessions()
    if not sessions:
        host.say("No stored sessions for this project.")
        return
    await host.choose_session(sessions)


async def _permissions(host: SlashHost, args: str) -> None:
    session = host.session
    words = args.split(maxsplit=2)
    if not words:
        lines = ["Permission rules:", *rule_lines(session.rules())]
        problems_of = getattr(session, "settings_problems", None)
        problems = problems_of() if callable(problems_of) else []
        if problems:  # a broken file's rules are not listed above: say why
            lines += ["", "Settings problems (what they name is not in force):"]
            lines += [f"  {p}" for p in problems]
        host.say("\n".join(lines), "warning" if problems else "info")
        open_view(host, "permissions")  # the app's editor: add and delete rules
        return
    if words[0] not in ("add", "remove") or len(words) < 3 or words[1] not in BEHAVIORS:
        host.say("usage: /permissions [add|remove <allow|ask|deny> <rule>]", "error")
        return
    action, behavior, rule = words
    from permissions.rules import parse_rule

    try:
        rule = str(parse_rule(rule))
    except ValueError as exc:
        host.say(f"Bad rule {rule!r}: {exc}", "error")
        return
    if action == "add":
        try:
            session.add_rule(behavior, rule)
        except (ValueError, OSError) as exc:
            host.say(f"Could not add rule: {exc}", "error")
            return
        host.say(f"Added {behavior} rule {rule} to local settings.")
        return
    sources = [r.source for r in session.rules() if r.behavior == behavior and r.rule == rule]
    for source in sources:
        try:
            if session.remove_rule(behavior, rule, source):
                host.say(f"Removed {behavior} rule {rule} from {source}.")
                return
        except (ValueError, OSError) as exc:
            host.say(f"Could not remove rule from {source}: {exc}", "error")
            return
    host.say(f"No {behavior} rule {rule} that can be removed.", "error")


async def _mode(host: SlashHost, args: str) -> None:
    session = host.session
    if not args:
        host.say(f"Permission mode: {session.mode} ({mode_label(session.mode)})")
        return
    from permissions.types import PermissionMode

    try:
        mode = PermissionMode.parse(args.strip())
    except ValueError as exc:
        host.say(str(exc), "error")
        return
    if mode is PermissionMode.BYPASS and not host.bypass_available:
        host.say("bypassPermissions is only available when enabled at launch.", "error")
        return
    if mode is PermissionMode.BUBBLE:
        host.say("bubble is for sub-agents only.", "error")
        return
    session.set_mode(mode.value)
    host.refresh_status()
    host.say(f"Permission mode: {mode_label(session.mode)}")


async def _model(host: SlashHost, args: str) -> None:
    if not args and host.interactive:
        from agent_cli.slash.model_picker import start_model_picker

        start_model_picker(host)
        return
    if args.split(" ", 1)[0] in OPTION_WORDS:  # /model thinking on, /model effort low
        await model_option(host, args)
        return
    if args:
        try:
            host.session.set_model(args)
        except ValueError as exc:
            host.say(str(exc), "error")
            return
        host.refresh_status()
    host.say(f"Model: {host.session.model}")


async def _cost(host: SlashHost, args: str) -> None:
    u = host.session.usage_summary()
    host.say(
        f"Input {format_tokens(u.get('input_tokens'))} tokens · "
        f"output {format_tokens(u.get('output_tokens'))} tokens · "
        f"context {format_tokens(u.get('context_tokens'))} · "
        f"{u.get('turns', 0)} turns · cost {format_cost(u.get('cost_usd'))}"
    )


async def _tools(host: SlashHost, args: str) -> None:
    tools = host.session.tools()
    lines = [f"Tools ({len(tools)}):"]
    for t in tools:
        marks = [m for m, on in (("deferred", t.deferred), ("mcp", t.is_mcp)) if on]
        suffix = f"  [{', '.join(marks)}]" if marks else ""
        desc = (t.description or "").splitlines()[0][:70] if t.description else ""
        lines.append(f"{t.name:<24}{suffix}  {desc}".rstrip())
    host.say("\n".join(lines))


async def _tasks(host: SlashHost, args: str) -> None:
    tasks = host.session.background_tasks()
    if not tasks:
        host.say("No background tasks.")
        return
    lines = [f"Background tasks ({len(tasks)}):"]
    lines += [f"{t.task_id:<12} {t.status:<10} {' '.join(t.command.split())[:80]}" for t in tasks]
    host.say("\n".join(lines))


async def _mcp(host: SlashHost, args: str) -> None:
    servers = getattr(host.session, "mcp_servers", None)
    if not callable(servers):
        host.say("MCP is not available in this session.")
        return
    from tools.mcp.manager import format_servers

    words = args.split()
    if words == ["approve"] and host.interactive:
        from agent_cli.slash.mcp_approval import start_project_question

        if not start_project_question(host):
            host.say("No project MCP servers are waiting for approval.")
        return
    if words and words[0] == "approve":
        approve = getattr(host.session, "approve_mcp_servers", None)
        if len(words) < 2 or not callable(approve):
            host.say("Usage: /mcp approve all|none|<server>...", "error")
            return
        choice: list[str] | str = words[1] if words[1:] in (["all"], ["none"]) else words[1:]
        try:
            host.say("\n".join(await approve(choice)))
        except ValueError as exc:
            host.say(str(exc), "error")
        return
    if words and words[0] in ("enable", "disable", "reconnect"):
        action = getattr(host.session, "mcp_action", None)
        if len(words) != 2 or not callable(action):
            host.say(f"Usage: /mcp {words[0]} <server>", "error")
            return
        host.say(await action(words[0], words[1]))
        return
    if words:
        host.say("Usage: /mcp [enable|disable|reconnect <server>] [approve ...]", "error")
        return
    host.say(format_servers(list(servers())))
    if host.interactive:
        from agent_cli.slash.mcp_view import start_mcp_view

        start_mcp_view(host)


async def _todos(host: SlashHost, args: str) -> None:
    todos = getattr(host.session, "todos", None)
    if not callable(todos):
        host.say("Todos are not available in this session.")
        return
    items = todos()
    if not items:
        host.say("No todos.")
        return
    done = sum(1 for t in items if t.get("status") == "completed")
    host.say(f"Todos ({done}/{len(items)} completed):\n{checklist(items)}")


async def _exit(host: SlashHost, args: str) -> None:
    host.exit(0)


BUILTIN_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "show commands and keys", _help, needs_session=False),
    SlashCommand(
        "clear",
        "start a new conversation (the old one stays resumable)",
        _clear,
        interactive_only=True,
    ),
    SlashCommand("resume", "resume a stored session", _resume, interactive_only=True),
    SlashCommand("permissions", "list rules; add|remove <allow|ask|deny> <rule>", _permissions),
    SlashCommand("mode", "show or set the permission mode", _mode),
    SlashCommand(
        "model",
        "pick or set the model; thinking on|off, effort <level>",
        _model,
        argument_hint="[name | thinking on|off|default | effort low..max|default]",
    ),
    SlashCommand("cost", "tokens and cost of this session", _cost),
    SlashCommand("tools", "list the tool pool", _tools),
    SlashCommand("tasks", "list background tasks", _tasks),
    SlashCommand(
        "mcp",
        "MCP servers and their status; enable|disable|reconnect <server>",
        _mcp,
        argument_hint="[enable|disable|reconnect <server>]",
    ),
    SlashCommand("todos", "show the current todo list", _todos),
    SANDBOX_COMMAND,
    SlashCommand(
        "exit", "quit Nerve", _exit, aliases=("quit",), needs_session=False, interactive_only=True
    ),
)

_REGISTRY: SlashRegistry | None = None
# The last table built, with what it was built for (a session, or a cwd without one).
_LAST: list[tuple[object, SlashRegistry]] = []


def default_registry() -> SlashRegistry:
    """The built-in commands (built once per process)."""
    global _REGISTRY
    if _REGISTRY is None:
        registry = SlashRegistry()
        registry.extend(BUILTIN_COMMANDS)
        registry.extend(CUSTOMIZE_COMMANDS)
        registry.extend(CONTEXT_COMMANDS)
        registry.extend(CONFIG_COMMANDS)
        registry.extend(STATUS_COMMANDS)
        registry.extend(WORKSPACE_COMMANDS)
        _REGISTRY = registry
    return _REGISTRY


def _commands_of(session: Any) -> Any:
    if session is None:  # `nerve -p /help` needs no session: read them from disk
        from agent_cli.customize.commands import load_prompt_commands

        return load_prompt_commands(Path.cwd()).user_commands()
    commands = getattr(session, "custom_commands", None)
    return commands() if callable(commands) else []


def registry_for(host: SlashHost) -> SlashRegistry:
    """The built-ins and the host's session's own commands (module docstring)."""
    session = session_of(host)
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
