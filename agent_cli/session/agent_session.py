"""A running session: the turn, mode changes, ``!`` commands, /clear, /resume, close.

``AgentSession`` implements ``SessionPort`` for the TUI and drives print mode. It is built by
``agent_cli.session.build`` (the composition root, via ``AgentSession.create``); the rules,
tools, tasks, usage and listing parts of the port are ``agent_cli.session.admin.SessionAdmin``.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_cli.loop.agent_loop import AgentLoop, LoopConfig, ModelPort
from agent_cli.loop.events import AgentEvent, Notice
from agent_cli.options import RunOptions
from agent_cli.session.admin import SessionAdmin
from agent_cli.session.build import build_session, restore_read_files
from agent_cli.session.context_ops import SessionContextOps, wire_checkpoints
from agent_cli.session.custom import run_prompt
from agent_cli.session.notification import SessionNotifications
from agent_cli.session.port import PermissionHandler, QuestionHandler
from agent_cli.session.restored_calls import restored_calls
from agent_cli.session.resume import (
    SessionError,
    find_session,
    repair_for_resume,
    restored_permissions,
)
from agent_cli.session.sandbox import SandboxAdmin
from agent_cli.session.transcript_open import open_transcript
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter
from permissions.types import PermissionMode, RuleSource
from tools.context import ToolUseContext
from tools.file_context import FILE_CONTEXT_KEY
from tools.pipeline.types import call_header

__all__ = ["AgentSession", "SessionError", "find_session"]


class AgentSession(SessionAdmin, SandboxAdmin, SessionContextOps, SessionNotifications):
    """One interactive or print-mode session (see module docstring)."""

    def __init__(
        self,
        *,
        cwd: Path,
        options: RunOptions,
        settings: Any,
        ctx: ToolUseContext,
        model_client: ModelPort,
        model_name: str,
        transcript: TranscriptWriter | None,
        system_prompt: str,
        warnings: list[str],
        messages: list[dict[str, Any]] | None = None,
        restored_tasks: list[dict[str, Any]] | None = None,
        mcp: Any = None,
    ) -> None:
        self.cwd = cwd
        self.options = options
        self.settings = settings
        self.model = model_name
        self.session_id = ctx.options.session_id
        self.transcript = transcript
        self.warnings = warnings
        self.restored_tasks = restored_tasks or []
        self._model_client = model_client
        self._handler: PermissionHandler | None = None
        self._mcp: Any = mcp  # tools.mcp.McpManager, connected before the first turn
        self._mcp_pending = mcp is not None
        self._start_source: str | None = "resume" if messages else "startup"
        self._restored: list[dict[str, Any]] = list(messages or [])
        self.restored_calls: dict[str, dict[str, Any]] = {}  # tool_use id -> its output's view
        self.loop = AgentLoop(
            model=model_client,
            model_name=model_name,
            ctx=ctx,
            system_prompt=system_prompt,
            config=LoopConfig(max_turns=options.max_turns, max_budget_usd=options.max_budget_usd),
            transcript=transcript,
            messages=messages,
            permission_handler=self._ask,
            on_rules_to_persist=self._persist_always_rules,
        )
        if messages:  # `nerve -c` / `-r ID`: the todo list as the conversation left it
            from tools.builtin.todo import restore_todos

            restore_todos(self.ctx.state.shared, messages)

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        options: RunOptions,
        *,
        cwd: Path | None = None,
        interactive: bool = False,
        model_client: ModelPort | None = None,
        record: bool = True,
    ) -> AgentSession:
        """Build a session from flags, settings and the environment (resuming if asked)."""
        return build_session(
            cls,
            options,
            cwd=cwd,
            interactive=interactive,
            model_client=model_client,
            record=record,
        )

    # -- SessionPort -------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self.ctx.permissions.mode.value

    def set_mode(self, mode: str) -> None:
        new = PermissionMode.parse(mode)
        if new is PermissionMode.BYPASS and not self.ctx.permissions.bypass_available:
            raise ValueError("bypassPermissions is only available when enabled at launch")
        perms = self.ctx.permissions
        before = perms.mode if new is PermissionMode.PLAN else None
        if new is PermissionMode.PLAN and perms.mode is PermissionMode.PLAN:
            before = perms.mode_before_plan
        self.loop.ctx = replace(
            self.ctx, permissions=replace(perms, mode=new, mode_before_plan=before)
        )
        if self.transcript is not None:
            self.transcript.meta("permission-mode", mode=new.value)

    def cycle_mode(self) -> str:
        from permissions.modes import next_mode

        perms = self.ctx.permissions
        new = next_mode(perms.mode, perms.bypass_available)
        self.set_mode(new.value)
        return new.value

    def set_permission_handler(self, handler: PermissionHandler) -> None:
        self._handler = handler

    def set_question_handler(self, handler: QuestionHandler) -> None:
        """AskUserQuestion's questions go to ``handler`` (the TUI's modal); without one no one
        can answer (print mode), and the tool says so to the model."""
        ctx = self.ctx
        self.loop.ctx = replace(ctx, callbacks=replace(ctx.callbacks, ask_user=handler))

    async def run_turn(
        self, prompt: str, *, images: Sequence[dict[str, Any]] = ()
    ) -> AsyncIterator[AgentEvent]:
        self.disarm_idle_notification()
        for warning in self.take_warnings():
            yield Notice(warning, "warning")
        if self._mcp_pending:
            for warning in await self._connect_mcp():
                yield Notice(warning, "warning")
        if self._start_source is not None:
            async for event in self._session_start(self._start_source):
                yield event
            self._start_source = None
        recorded = self.mode
        async for event in run_prompt(self, prompt, images):  # a custom command expands here
            if self.mode != recorded:
                # A tool changed the mode (EnterPlanMode, ExitPlanMode): recorded like set_mode.
                recorded = self.mode
                if self.transcript is not None:
                    self.transcript.meta("permission-mode", mode=recorded)
            yield event
        self.arm_idle_notification()  # Notification hooks: idle_prompt

    def abort(self) -> None:
        self.loop.abort()
        if self.expansion_abort is not None:  # a custom command's `!cmd` line is running
            self.expansion_abort.abort()

    async def run_shell(self, command: str) -> str:
        from tools.process.runner import bash_path, run_in_group

        # The Bash tool's runner: its own session, cgroup scope and lease, so nothing it starts
        # (``setsid``, ``&``) outlives the command or a crash of Nerve.
        tail = bytearray()

        def keep_tail(data: bytes) -> None:
            tail.extend(data)
            del tail[:-120_000]  # only the last 30,000 characters are shown

        outcome = await run_in_group(
            [bash_path(), "-c", command],
            cwd=self.ctx.cwd,  # the worktree, once the session entered one
            on_data=keep_tail,
            timeout_s=120,
            scope_kind="shell",
            env=None if self.ctx.options.environ is None else dict(self.ctx.options.environ),
        )
        out = bytes(tail)
        if outcome.timed_out:
            out += b"[timed out after 120 s]"
        text = out.decode("utf-8", "replace")[-30_000:]
        note = f"<bash-input>{command}</bash-input>\n<bash-stdout>{text}</bash-stdout>"
        message = {"role": "user", "content": note}
        self.loop.messages.append(message)
        if self.transcript is not None:
            self.transcript.user(message, isMeta=True)
        return text

    def clear(self) -> None:
        """A new conversation in a new transcript; the old one stays resumable."""
        self.loop.messages.clear()
        self.loop.ctx.state.read_files = type(self.ctx.state.read_files)()
        self.ctx.state.shared.pop("todos", None)  # a new conversation starts without a list
        forget = getattr(self.ctx.options.extra.get(FILE_CONTEXT_KEY), "forget", None)
        if callable(forget):
            forget()  # path-scoped rules attach again in the new conversation
        if self.transcript is not None:
            self.transcript.close()
            new_id = str(uuid.uuid4())
            self.transcript = TranscriptWriter(
                self.transcript.path.with_name(f"{new_id}.jsonl"),
                session_id=new_id,
                cwd=self.cwd,
                git_branch=self.transcript.git_branch,
                lock=True,
            )
            self.loop.transcript = self.transcript
            self.session_id = new_id
            self.loop.ctx = replace(
                self.ctx,
                options=replace(
                    self.ctx.options, session_id=new_id, session_dir=self.transcript.session_dir
                ),
            )
        self.loop.compaction.meter.reset()
        wire_checkpoints(self.loop, self.transcript)

    async def resume(self, session_id: str) -> list[dict[str, Any]]:
        """Switch to a stored session (``/resume``): the same restoration as ``nerve -r ID``."""
        from tools.builtin.todo import restore_todos
        from tools.context import ReadFileState

        path = find_session(self.cwd, session_id)
        reader = TranscriptReader.load(path)
        old_branch = self.transcript.git_branch if self.transcript is not None else None
        self.session_id = reader.session_id or path.stem
        if self.transcript is not None:
            self.transcript.close()
            # Held by another Nerve: continue in a copy of it (transcript_open).
            self.transcript, notices = open_transcript(
                self.cwd, self.session_id, git_branch=old_branch, reader=reader
            )
            self.warnings += notices
            self.loop.transcript = self.transcript
            self.session_id = self.transcript.session_id
        perms = self.ctx.permissions
        stored_rules, mode, rule_warnings = restored_permissions(reader, self.cwd)
        rules = [r for r in perms.rules if r.source is not RuleSource.SESSION] + stored_rules
        self.warnings += rule_warnings
        read_files = ReadFileState()
        self.warnings += restore_read_files(reader, read_files)
        self.loop.ctx.state.read_files = read_files
        self.loop.ctx = replace(
            self.ctx,
            permissions=replace(
                perms, rules=tuple(rules), mode=PermissionMode.DEFAULT if mode is None else mode
            ),
            options=replace(
                self.ctx.options,
                session_id=self.session_id,
                session_dir=self.transcript.session_dir if self.transcript else None,
            ),
        )
        self.restored_tasks = list(reader.background_tasks)
        self.warnings += reader.warnings
        self.loop.messages[:] = repair_for_resume(reader, self.transcript)
        self.restored_calls = restored_calls(reader.records)
        self.loop.compaction.meter.reset()
        restore_todos(self.ctx.state.shared, self.loop.messages)
        wire_checkpoints(self.loop, self.transcript, reader)  # after: a compaction's todo list
        self._start_source = "resume"
        return list(self.loop.messages)

    def restored_messages(self) -> list[dict[str, Any]]:
        return list(self._restored)

    def describe_call(self, name: str, tool_input: Any) -> str:
        """The header a call of ``name`` with ``tool_input`` is shown under, as live."""
        return call_header(self.loop.tools, name, tool_input)

    def prewarm(self) -> None:
        """Import the model SDK in the background (call after the UI's first frame)."""
        prewarm = getattr(self._model_client, "prewarm", None)
        if prewarm is not None:
            prewarm()
        if self._mcp_pending:
            self._mcp.set_roots(self.ctx.permissions.working_dirs)
            self._mcp.start_soon()  # MCP servers connect while the user types

    # The start-up reaper's thread (None when there is none): close() lets it finish, so a short
    # print-mode run that ends the process at once still ends the orphans it found.
    reaper: Any = None

    async def close(self) -> None:
        self.disarm_idle_notification()
        from tools.process.background import BackgroundTaskManager

        if self.reaper is not None:
            await asyncio.to_thread(self.reaper.join, 5.0)

        manager = self.ctx.state.shared.get("background_tasks")
        if isinstance(manager, BackgroundTaskManager):
            await manager.stop_all()  # first, so the record says how each task ended
            if self.transcript is not None:
                self.transcript.meta("background-tasks", tasks=manager.records())
        if self._mcp is not None:
            await self._mcp.close()  # every MCP server process ends here
        hooks = self.ctx.hooks
        if hooks is not None and hooks.has_hooks("SessionEnd"):
            try:
                await asyncio.wait_for(hooks.run_event("SessionEnd", {"reason": "other"}), 5)
            except TimeoutError:
                pass
        aclose = getattr(self._model_client, "aclose", None)
        if aclose is not None:
            await aclose()
        if self.transcript is not None:
            self.transcript.close()
        await _end_leftovers(self.ctx)

    # Custom commands and skills (``agent_cli.session.custom`` sets them while building).
    commands: Any = None  # agent_cli.customize.commands.CommandSet
    expansion_abort: Any = None  # the AbortSignal of a command being expanded

    def custom_commands(self) -> list[Any]:
        """What ``/`` offers besides the built-ins: custom commands and skills."""
        return [] if self.commands is None else self.commands.user_commands()

    def agent_definitions(self) -> list[Any]:
        """``/agents``: the sub-agent types (``tools.builtin.agent.AgentDefinition``)."""
        from tools.builtin.agent import RUNNER_KEY

        runner = self.ctx.options.extra.get(RUNNER_KEY)
        return [] if runner is None else list(runner.agent_types())

    def mcp_servers(self) -> list[Any]:
        """``/mcp``: each configured server's status (``tools.mcp.McpServerView``)."""
        return [] if self._mcp is None else self._mcp.servers()

    async def mcp_action(self, action: str, name: str) -> str:
        """``/mcp enable|disable|reconnect NAME``; the tool pool follows."""
        if self._mcp is None:
            return "No MCP servers configured."
        if self._mcp_pending:
            await self._connect_mcp()
        method = {"enable": self._mcp.enable, "disable": self._mcp.disable}.get(
            action, self._mcp.reconnect
        )
        try:
            message: str = await method(name)
        except KeyError as exc:
            return str(exc.args[0])
        self._pool_mcp_tools()
        return message

    def pending_mcp_servers(self) -> list[tuple[str, str]]:
        """Project servers waiting for approval: (name, command line or url)."""
        from agent_cli.session.mcp_approval import pending_project_servers

        return pending_project_servers(self._mcp)

    async def approve_mcp_servers(self, choice: list[str] | str) -> list[str]:
        """Use ``"all"``, ``"none"`` or the named project servers (``mcp_approval``)."""
        from agent_cli.session.mcp_approval import approve_project_servers

        if self._mcp is None:
            return ["No project MCP servers are waiting for approval."]
        if self._mcp_pending:
            await self._connect_mcp()
        messages = await approve_project_servers(self._mcp, self.cwd, choice)
        self._pool_mcp_tools()
        return messages

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        """``/mcp__server__prompt`` commands: (name, description, argument hint)."""
        if self._mcp is None:
            return []
        return [(c[0], c[1], c[2]) for c in self._mcp.prompt_commands()]

    async def mcp_prompt(self, command: str, args: str) -> str:
        """The text an MCP prompt command expands to (raises with a message for the user)."""
        if self._mcp is None:
            raise KeyError(f"no MCP prompt /{command}")
        if self._mcp_pending:
            await self._connect_mcp()
        text: str = await self._mcp.expand_prompt(command, args)
        return text

    def todos(self) -> list[dict[str, Any]]:
        """``/todos``: the main agent's todo list (TodoWrite's items, camelCase dicts)."""
        from tools.builtin.todo import current_todos

        return current_todos(self.ctx)

    # -- internals ---------------------------------------------------------------------------

    async def _connect_mcp(self) -> list[str]:
        """Start the MCP servers (once) and add their tools after the built-ins."""
        self._mcp_pending = False
        self._mcp.set_roots(self.ctx.permissions.working_dirs)
        warnings: list[str] = await self._mcp.start()
        self._pool_mcp_tools()
        return warnings

    def _pool_mcp_tools(self) -> None:
        from tools.mcp.resources import RESOURCE_TOOL_NAMES
        from tools.registry import assemble_tool_pool

        ctx = self.ctx
        builtins = [
            t for t in ctx.options.tools if not t.is_mcp and t.name not in RESOURCE_TOOL_NAMES
        ]
        pool = assemble_tool_pool(builtins, self._mcp.tools(), ctx.permissions)
        self.loop.ctx = replace(ctx, options=replace(ctx.options, tools=tuple(pool)))

    async def _session_start(self, source: str) -> AsyncIterator[AgentEvent]:
        """SessionStart hooks, once, before the first prompt: their context joins the session."""
        from agent_cli.loop.messages import system_reminder

        hooks = self.ctx.hooks
        if hooks is None or not hooks.has_hooks("SessionStart"):
            return
        outcome = await hooks.run_event(
            "SessionStart", {"source": source, "model": self.model}, match_value=source
        )
        for msg in outcome.system_messages:
            yield Notice(msg, "warning")
        env_file = getattr(hooks, "env_file", None)
        if env_file is not None:
            from tools.hooks.env_file import exported_by_env_file

            base = self.ctx.options.environ
            base = dict(os.environ if base is None else base)
            exported, problem = await exported_by_env_file(env_file, base)
            if problem is not None:
                yield Notice(problem, "warning")
            if exported:
                ctx = self.loop.ctx
                environ = {**base, **exported}
                self.loop.ctx = replace(ctx, options=replace(ctx.options, environ=environ))
        for text in outcome.additional_context:
            reminder = system_reminder(f"SessionStart hook context:\n{text}", ephemeral=False)
            self.loop.messages.append(reminder)
            if self.transcript is not None:
                self.transcript.user(reminder, isMeta=True)

    async def _ask(self, prompt: Any) -> Any:
        if self._handler is None:
            return await _deny_non_interactive(prompt)
        return await self._handler(prompt)


async def _end_leftovers(ctx: ToolUseContext) -> None:
    """Nothing Nerve started outlives it: hooks' detached jobs, escapees of ``setsid``
    (tools.process.containment), the sandbox's temp dir; then the lease goes, so the next start has
    nothing to reap."""
    from tools.process.containment import close_scopes
    from tools.process.owners import forget_own_lease
    from tools.sandbox import get_sandbox

    await close_scopes()
    sandbox = get_sandbox(ctx)
    if sandbox is not None:
        await sandbox.close()
    forget_own_lease()


async def _deny_non_interactive(prompt: Any) -> Any:
    from tools.context import PermissionAnswer, PermissionResponse

    verdict = prompt.verdict
    why = verdict.reason
    return PermissionResponse(
        PermissionAnswer.DENY,
        feedback=(
            f"Permission to use {prompt.tool_name} was not granted ({why}). Nerve is running "
            "non-interactively, so a call that needs approval is denied. The user can allow it "
            "with --allowedTools, a permission rule in settings, or --permission-mode."
        ),
    )
