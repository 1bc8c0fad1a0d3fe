"""Bash in the OS sandbox, when the session has one on (``tools.sandbox``).

:func:`run_command` runs a foreground command (a :class:`Foreground`) through the runner
either confined (bubblewrap: no cgroup scope needed, its PID namespace holds every descendant)
or as before; the proxy asks the user about new domains through the normal permission prompt. :func:`start_task` does the
same for a background task, which cannot ask: a new domain is refused and noted on the task.

Around every sandboxed command, foreground or background, the session's ``GitlinkGuard``
removes the submodule entries it added to the git index (``tools.sandbox.gitlinks``): a
foreground command's result says so; a background task's removals are checked when it ends and
noted on the task (TaskOutput shows them), and any sandboxed command ending while it runs
checks that repository too, so they are undone before that command's result at the latest.
The gitlink paths that watch read before the command (``GitlinkWatch.checkouts``) go to
``prepare``: the mounts guard those submodules too, ``.gitmodules`` or not
(``tools.sandbox.gitguard``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from config.safe_git import pin_git_env
from permissions.types import Decision, PermissionMode, ReasonKind, RuleValue, Verdict
from tools.context import PermissionAnswer, PermissionPrompt, ToolUseContext
from tools.process.runner import RunOutcome, SpawnOptions, run_in_group
from tools.records import datarecord
from tools.sandbox import SandboxSession, get_sandbox
from tools.sandbox.gitlinks import begin_watch, end_watch
from tools.sandbox.proxy import AskAnswer, DomainGate, NetworkAsk
from tools.sandbox.readrules import denied_reads

__all__ = ["Foreground", "run_command", "session_env", "start_task"]


def session_env(ctx: ToolUseContext) -> dict[str, str]:
    """The session environment (settings ``env`` over the shell's) a command runs in, with
    ``core.fsmonitor=false`` pinned for every git it runs (background tasks too)."""
    environ = ctx.options.environ
    return pin_git_env(os.environ if environ is None else environ)


def _ask(ctx: ToolUseContext, command: str) -> NetworkAsk:
    async def ask(host: str, port: int) -> AskAnswer:
        verdict = Verdict(
            Decision.ASK,
            f"a sandboxed command wants to reach {host}:{port}, which is not in "
            "sandbox.network.allowedDomains",
            ReasonKind.SANDBOX,
            suggestions=(RuleValue("WebFetch", f"domain:{host}"),),
        )
        prompt = PermissionPrompt(
            tool_name="Bash",
            tool_use_id="",
            input={"url": f"{host}:{port}", "command": command},
            verdict=verdict,
            title=f"Network access to {host}:{port} from the sandbox",
            agent_id=ctx.agent.agent_id,
        )
        response = await ctx.callbacks.request_permission(prompt)
        if response.answer is PermissionAnswer.DENY:
            return AskAnswer(False, (response.feedback or "the user declined").replace("\n", " "))
        remember = response.answer is PermissionAnswer.ALLOW_ALWAYS
        return AskAnswer(True, "approved by the user", remember=remember)

    return ask


def _gate(
    ctx: ToolUseContext, sandbox: SandboxSession, command: str, background: bool
) -> DomainGate:
    deny_asks = None
    if background:
        deny_asks = "a background task cannot ask"
    elif ctx.permissions.mode is PermissionMode.DONT_ASK:
        deny_asks = "dontAsk mode refuses what would ask"
    return DomainGate(
        sandbox.config,
        rules=ctx.permissions.rules,
        approved=sandbox.approved_domains,
        ask=None if background else _ask(ctx, command),
        deny_asks=deny_asks,
    )


@datarecord(frozen=True, slots=True)
class Foreground:
    """A foreground command as the runner takes it, before the sandbox (if any) wraps it."""

    argv: list[str]  # ``bash -c`` and the script
    cwd: Path
    on_data: Callable[[bytes], None]
    timeout_s: float
    pass_fds: tuple[int, ...] = ()  # inherited by the command (the cwd channel)


def _confining(
    ctx: ToolUseContext, command: str, disable: bool, notices: list[str]
) -> SandboxSession | None:
    """The session's sandbox if it confines ``command`` (its notice, if any, to ``notices``)."""
    sandbox = get_sandbox(ctx)
    conf = sandbox.confinement(command, disable) if sandbox is not None else None
    if conf is not None and conf.notice:
        notices.append(conf.notice)
    if sandbox is None or conf is None or not conf.sandboxed:
        return None
    return sandbox


async def run_command(
    foreground: Foreground, *, ctx: ToolUseContext, command: str, disable: bool, notices: list[str]
) -> RunOutcome:
    """Run ``foreground`` sandboxed if the session's sandbox confines ``command``."""
    sandbox = _confining(ctx, command, disable, notices)
    if sandbox is None:
        return await run_in_group(
            foreground.argv,
            cwd=foreground.cwd,
            on_data=foreground.on_data,
            timeout_s=foreground.timeout_s,
            abort=ctx.abort,
            spawn=SpawnOptions(env=session_env(ctx), pass_fds=foreground.pass_fds),
        )
    reads = await asyncio.to_thread(denied_reads, ctx.permissions)
    watch = await begin_watch(sandbox.gitlinks, [foreground.cwd, *ctx.permissions.working_dirs])
    try:
        run = sandbox.prepare(
            foreground.argv,
            cwd=foreground.cwd,
            working_dirs=ctx.permissions.working_dirs,
            env=session_env(ctx),
            gate=_gate(ctx, sandbox, command, background=False),
            reads=reads,
            gitlinks=watch.checkouts,
        )
        try:
            return await run_in_group(
                run.argv,
                cwd=foreground.cwd,
                on_data=foreground.on_data,
                timeout_s=foreground.timeout_s,
                abort=ctx.abort,
                spawn=SpawnOptions(
                    env=run.env,
                    pass_fds=(*foreground.pass_fds, *run.pass_fds),
                    scope_kind=None,  # the PID namespace holds every descendant
                    after_spawn=run.after_spawn,
                    pid_namespace=True,
                ),
            )
        finally:
            await run.cleanup()
            notices += run.notices
    finally:
        # after cleanup: the stubs (a ``commondir`` holding ".") are gone when Nerve's git runs
        notices += await end_watch(sandbox.gitlinks, watch)


async def start_task(
    command: str,
    *,
    ctx: ToolUseContext,
    disable: bool,
    cwd: Path,
    notices: list[str],
    description: str = "",
) -> object:
    """Start a background task, sandboxed like a foreground command; its snapshot."""
    from tools.process.background import get_manager
    from tools.process.runner import bash_path

    manager = get_manager(ctx)
    sandbox = _confining(ctx, command, disable, notices)
    if sandbox is None:
        return await manager.start(command, cwd=cwd, env=session_env(ctx), description=description)
    reads = await asyncio.to_thread(denied_reads, ctx.permissions)
    guard = sandbox.gitlinks
    watch = await begin_watch(guard, [cwd, *ctx.permissions.working_dirs])
    try:
        run = sandbox.prepare(
            [bash_path(), "-c", command],
            cwd=cwd,
            working_dirs=ctx.permissions.working_dirs,
            env=session_env(ctx),
            gate=_gate(ctx, sandbox, command, background=True),
            reads=reads,
            gitlinks=watch.checkouts,
        )
    except BaseException:
        await end_watch(guard, watch)
        raise
    started: list[Any] = []  # the task, once it exists

    async def after_spawn(pid: int, task: Any) -> None:
        started.append(task)
        if run.proxy is not None:
            task.notes = run.proxy.notices  # TaskOutput shows refusals as they come
        await run.after_spawn(pid)

    async def cleanup() -> None:
        """When the task has ended: the sandbox's cleanup, then the gitlinks it added."""
        try:
            await run.cleanup()
        finally:
            notes = await end_watch(guard, watch, who="the background task")
            if started:
                started[0].notes += notes

    try:
        return await manager.start(
            command,
            cwd=cwd,
            argv=run.argv,
            env=run.env,
            pass_fds=run.pass_fds,
            after_spawn=after_spawn,
            description=description,
            cleanup=cleanup,
        )
    except BaseException:
        await cleanup()  # idempotent, like the watch's end: the task's own may have run
        raise
