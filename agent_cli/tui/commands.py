"""Slash commands. Each handler is thin: it calls the session and prints what came back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agent_cli.tui.labels import format_cost, format_tokens, mode_label, rule_lines

if TYPE_CHECKING:
    from agent_cli.tui.app import NerveApp

__all__ = ["COMMANDS", "HELP_KEYS", "WITHOUT_SESSION", "parse_slash", "run_command"]

COMMANDS: dict[str, str] = {
    "help": "show commands and keys",
    "clear": "start a new conversation (the old one stays resumable)",
    "resume": "resume a stored session",
    "permissions": "list rules; add|remove <allow|ask|deny> <rule>",
    "mode": "show or set the permission mode",
    "model": "show or set the model",
    "cost": "tokens and cost of this session",
    "tools": "list the tool pool",
    "tasks": "list background tasks",
    "mcp": "list MCP servers and their status",
    "todos": "show the current todo list",
    "exit": "quit Nerve",
    "quit": "quit Nerve",
}
# Commands that work while the session is still starting (or failed to start); the others wait.
WITHOUT_SESSION = frozenset({"help", "exit", "quit"})

HELP_KEYS = [
    "Enter send · Ctrl+J newline · Up/Down history · Tab complete",
    "Shift+Tab cycle permission mode · Esc interrupt · Ctrl+C clear input / interrupt",
    "Ctrl+D twice exit · !cmd run a shell command · @path mention a file",
]

Handler = Callable[["NerveApp", str], Awaitable[None]]
BEHAVIORS = ("allow", "ask", "deny")


def parse_slash(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args); None when the text is not a slash command."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, args = stripped[1:].partition(" ")
    return name.lower(), args.strip()


async def _help(app: NerveApp, args: str) -> None:
    lines = [f"/{name:<12} {desc}" for name, desc in COMMANDS.items()]
    app.say("\n".join(["Commands:", *lines, "", *HELP_KEYS]))


async def _clear(app: NerveApp, args: str) -> None:
    app.session.clear()
    await app.conversation.clear_log()
    app.say("Started a new conversation.")
    app.refresh_status()


async def _resume(app: NerveApp, args: str) -> None:
    if args:
        await app.resume_session(args)
        return
    sessions = app.session.list_sessions()
    if not sessions:
        app.say("No stored sessions for this project.")
        return
    from agent_cli.tui.resume import ResumeScreen

    def chosen(session_id: str | None) -> None:
        if session_id:
            app.run_worker(app.resume_session(session_id), group="resume")

    app.push_screen(ResumeScreen(sessions), chosen)


async def _permissions(app: NerveApp, args: str) -> None:
    words = args.split(maxsplit=2)
    if not words:
        app.say("\n".join(["Permission rules:", *rule_lines(app.session.rules())]))
        return
    if words[0] not in ("add", "remove") or len(words) < 3 or words[1] not in BEHAVIORS:
        app.say("usage: /permissions [add|remove <allow|ask|deny> <rule>]", "error")
        return
    action, behavior, rule = words
    from permissions.rules import parse_rule

    try:
        rule = str(parse_rule(rule))
    except ValueError as exc:
        app.say(f"Bad rule {rule!r}: {exc}", "error")
        return
    if action == "add":
        try:
            app.session.add_rule(behavior, rule)
        except (ValueError, OSError) as exc:
            app.say(f"Could not add rule: {exc}", "error")
            return
        app.say(f"Added {behavior} rule {rule} to local settings.")
        return
    sources = [r.source for r in app.session.rules() if r.behavior == behavior and r.rule == rule]
    for source in sources:
        try:
            if app.session.remove_rule(behavior, rule, source):
                app.say(f"Removed {behavior} rule {rule} from {source}.")
                return
        except (ValueError, OSError) as exc:
            app.say(f"Could not remove rule from {source}: {exc}", "error")
            return
    app.say(f"No {behavior} rule {rule} that can be removed.", "error")


async def _mode(app: NerveApp, args: str) -> None:
    if not args:
        app.say(f"Permission mode: {app.session.mode} ({mode_label(app.session.mode)})")
        return
    from permissions.types import PermissionMode

    try:
        mode = PermissionMode.parse(args.strip())
    except ValueError as exc:
        app.say(str(exc), "error")
        return
    if mode is PermissionMode.BYPASS and not app.bypass_available:
        app.say("bypassPermissions is only available when enabled at launch.", "error")
        return
    if mode is PermissionMode.BUBBLE:
        app.say("bubble is for sub-agents only.", "error")
        return
    app.session.set_mode(mode.value)
    app.refresh_status()
    app.say(f"Permission mode: {mode_label(app.session.mode)}")


async def _model(app: NerveApp, args: str) -> None:
    if args:
        try:
            app.session.set_model(args)
        except ValueError as exc:
            app.say(str(exc), "error")
            return
        app.refresh_status()
    app.say(f"Model: {app.session.model}")


async def _cost(app: NerveApp, args: str) -> None:
    u = app.session.usage_summary()
    app.say(
        f"Input {format_tokens(u.get('input_tokens'))} tokens · "
        f"output {format_tokens(u.get('output_tokens'))} tokens · "
        f"context {format_tokens(u.get('context_tokens'))} · "
        f"{u.get('turns', 0)} turns · cost {format_cost(u.get('cost_usd'))}"
    )


async def _tools(app: NerveApp, args: str) -> None:
    tools = app.session.tools()
    lines = [f"Tools ({len(tools)}):"]
    for t in tools:
        marks = [m for m, on in (("deferred", t.deferred), ("mcp", t.is_mcp)) if on]
        suffix = f"  [{', '.join(marks)}]" if marks else ""
        desc = (t.description or "").splitlines()[0][:70] if t.description else ""
        lines.append(f"{t.name:<24}{suffix}  {desc}".rstrip())
    app.say("\n".join(lines))


async def _tasks(app: NerveApp, args: str) -> None:
    tasks = app.session.background_tasks()
    if not tasks:
        app.say("No background tasks.")
        return
    lines = [f"Background tasks ({len(tasks)}):"]
    lines += [f"{t.task_id:<12} {t.status:<10} {' '.join(t.command.split())[:80]}" for t in tasks]
    app.say("\n".join(lines))


async def _mcp(app: NerveApp, args: str) -> None:
    servers = getattr(app.session, "mcp_servers", None)
    if not callable(servers):
        app.say("MCP is not available in this session.")
        return
    from tools.mcp.manager import format_servers

    app.say(format_servers(list(servers())))


async def _todos(app: NerveApp, args: str) -> None:
    todos = getattr(app.session, "todos", None)
    if not callable(todos):
        app.say("Todos are not available in this session.")
        return
    items = todos()
    if not items:
        app.say("No todos.")
        return
    from agent_cli.tui.todos import checklist

    done = sum(1 for t in items if t.get("status") == "completed")
    app.say(f"Todos ({done}/{len(items)} completed):\n{checklist(items)}")


async def _exit(app: NerveApp, args: str) -> None:
    app.exit(0)


HANDLERS: dict[str, Handler] = {
    "help": _help,
    "clear": _clear,
    "resume": _resume,
    "permissions": _permissions,
    "mode": _mode,
    "model": _model,
    "cost": _cost,
    "tools": _tools,
    "tasks": _tasks,
    "mcp": _mcp,
    "todos": _todos,
    "exit": _exit,
    "quit": _exit,
}


async def run_command(app: NerveApp, name: str, args: str) -> None:
    """Run ``/name args``; an unknown name is reported, not sent to the model."""
    handler = HANDLERS.get(name)
    if handler is None:
        app.say(f"Unknown command /{name}. Type /help for the list.", "error")
        return
    await handler(app, args)
