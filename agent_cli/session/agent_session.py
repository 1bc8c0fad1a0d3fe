"""A running session: the port a UI drives, over the parts the session holds.

``AgentSession`` implements ``SessionPort`` for the TUI and drives print mode and SDK mode. It is
built by ``agent_cli.session.build`` (the composition root, via ``AgentSession.create``) around
an agent loop, and holds its parts, each an object with its own small interface and only the
state it needs (the loop, whose live context each reads and replaces; the directory):

- ``permissions`` (``permission_admin.PermissionAdmin``): the mode, the rules, the directories;
- ``approvals`` (``permission_admin.Approvals``): who answers a permission prompt;
- ``models`` (``model_setup.ModelChoice``): the session's model, and a command's for its turn;
- ``context_ops`` (``context_ops.ContextOps``): ``/compact``, ``/context``, ``/rewind``;
- ``sandbox`` (``sandbox.SandboxAdmin``): ``/sandbox``;
- ``tasks`` (``tasks.BackgroundTasks``): ``/tasks``; stopped when the session closes;
- ``notifications`` (``notification.Notifications``): the Notification hooks;
- ``mcp`` (``mcp_servers.McpServers``): the MCP servers and ``/mcp``;
- ``start_hooks`` (``start_hooks.StartHooks``): SessionStart, before a conversation's first turn.

The port's methods delegate to them. The session's own are the turn (a prompt, or a custom
command ``agent_cli.session.custom`` expands), ``!`` commands, switching conversations
(``/clear``, ``/resume``) and closing.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.loop.agent_loop import AgentLoop, ModelPort
from agent_cli.loop.events import AgentEvent, Notice
from agent_cli.options import RunOptions
from agent_cli.session.build import build_session
from agent_cli.session.context_ops import ContextOps, wire_checkpoints
from agent_cli.session.custom import run_prompt
from agent_cli.session.mcp_servers import McpServers
from agent_cli.session.model_setup import ModelChoice
from agent_cli.session.notification import Notifications
from agent_cli.session.permission_admin import Approvals, PermissionAdmin
from agent_cli.session.port import (
    BackgroundTaskView,
    PermissionHandler,
    QuestionHandler,
    RuleView,
    ToolView,
)
from agent_cli.session.resume import (
    Resumed,
    SessionError,
    find_session,
    resumable_sessions,
    resumed_from,
)
from agent_cli.session.sandbox import SandboxAdmin
from agent_cli.session.start_hooks import StartHooks
from agent_cli.session.tasks import BackgroundTasks
from agent_cli.session.transcript_open import open_transcript
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter
from tools.context import ToolUseContext
from tools.messages import Message
from tools.pipeline.types import call_header

if TYPE_CHECKING:
    from agent_cli.loop.context_usage import ContextUsage
    from agent_cli.session.context_ops import RewindPoint, RewindPreview, RewindResult

__all__ = ["AgentSession", "SessionError", "find_session"]


class AgentSession:
    """One interactive, print-mode or SDK session (see the module docstring)."""

    def __init__(
        self,
        *,
        cwd: Path,
        options: RunOptions,
        settings: Any,
        loop: AgentLoop,
        transcript: TranscriptWriter | None,
        warnings: list[str],
        resumed: Resumed | None = None,
        mcp: Any = None,  # tools.mcp.McpManager, connected before the first turn
    ) -> None:
        self.cwd = cwd
        self.options = options
        self.settings = settings
        self.loop = loop
        self.transcript = transcript
        self.session_id = loop.ctx.options.session_id
        self.warnings = warnings  # not shown yet: the next turn shows them (or take_warnings)
        self.restored_calls = {} if resumed is None else resumed.calls  # id -> its output's view
        self._model_client = loop.model  # its own: a front end may wrap the loop's (stream-json)
        # The start-up reaper's thread (None when there is none): close() lets it finish, so a
        # short print-mode run that ends the process at once still ends the orphans it found.
        self.reaper: Any = None
        # Custom commands and skills (``agent_cli.session.custom`` sets them while building).
        self.commands: Any = None  # agent_cli.customize.commands.CommandSet
        self.expansion_abort: Any = None  # the AbortSignal of a command being expanded
        restored = [] if resumed is None else resumed.messages
        self._restored = list(restored)
        conversation = loop.ctx.state.conversation
        self.approvals = Approvals()
        self.permissions = PermissionAdmin(loop, cwd)
        self.models = ModelChoice(loop)
        self.context_ops = ContextOps(loop)
        self.sandbox = SandboxAdmin(loop, cwd)
        self.tasks = BackgroundTasks(
            conversation, [] if resumed is None else resumed.background_tasks
        )
        self.notifications = Notifications(loop, self.approvals, warnings)
        self.mcp = McpServers(mcp, loop, cwd)
        self.start_hooks = StartHooks(loop, "resume" if restored else "startup")
        loop.permission_handler = self.approvals.ask
        loop.on_rules_to_persist = self.permissions.persist_always
        if restored:  # `nerve -c` / `-r ID`: the todo list as the conversation left it
            from tools.builtin.todo import restore_todos

            restore_todos(conversation, restored)

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

    @property
    def ctx(self) -> ToolUseContext:
        """The loop's live tool context (replaced, never mutated, by each change)."""
        return self.loop.ctx

    @property
    def model(self) -> str:
        return self.models.name

    # -- the turn ----------------------------------------------------------------------------

    async def run_turn(
        self, prompt: str, *, images: Sequence[dict[str, Any]] = ()
    ) -> AsyncIterator[AgentEvent]:
        self.notifications.disarm_idle()
        for warning in self.take_warnings():
            yield Notice(warning, "warning")
        for warning in await self.mcp.connect():  # once: the servers' tools join the pool
            yield Notice(warning, "warning")
        async for event in self.start_hooks.run(self.model):
            yield event
        recorded = self.mode
        async for event in run_prompt(self, prompt, images):  # a custom command expands here
            if self.mode != recorded:
                # A tool changed the mode (EnterPlanMode, ExitPlanMode): recorded like set_mode.
                recorded = self.mode
                self.permissions.record_mode()
            yield event
        self.notifications.arm_idle()  # Notification hooks: idle_prompt

    def abort(self) -> None:
        self.loop.abort()
        if self.expansion_abort is not None:  # a custom command's `!cmd` line is running
            self.expansion_abort.abort()

    async def run_shell(self, command: str) -> str:
        text = await _run_user_command(self.ctx, command)
        note = f"<bash-input>{command}</bash-input>\n<bash-stdout>{text}</bash-stdout>"
        message: Message = {"role": "user", "content": note}
        self.loop.messages.append(message)
        if self.transcript is not None:
            self.transcript.user(message, isMeta=True)
        return text

    def take_warnings(self) -> list[str]:
        """The start-up warnings not shown yet; the app shows them at once (else the first
        turn does)."""
        out = list(self.warnings)
        self.warnings.clear()  # the same list: the parts that add to it keep it
        return out

    # -- switching conversations -------------------------------------------------------------

    def clear(self) -> None:
        """A new conversation in a new transcript; the old one stays resumable."""
        self.loop.messages.clear()
        self.loop.ctx.state.read_files = type(self.ctx.state.read_files)()
        self.ctx.state.conversation.todos = None  # a new conversation starts without a list
        forget = getattr(self.ctx.options.services.file_context, "forget", None)
        if callable(forget):
            forget()  # path-scoped rules attach again in the new conversation
        if self.transcript is not None:
            self.transcript.close()
            new_id = str(uuid.uuid4())
            transcript = TranscriptWriter(
                self.transcript.path.with_name(f"{new_id}.jsonl"),
                session_id=new_id,
                cwd=self.cwd,
                git_branch=self.transcript.git_branch,
                lock=True,
            )
            self._adopt(new_id, transcript)
        self.loop.compaction.meter.reset()
        wire_checkpoints(self.loop, self.transcript)

    async def resume(self, session_id: str) -> list[Message]:
        """Switch to a stored session (``/resume``): the same restoration as ``nerve -r ID``."""
        from tools.builtin.todo import restore_todos
        from tools.context import ReadFileState

        reader = TranscriptReader.load(find_session(self.cwd, session_id))
        self._reopen(reader)
        self.warnings += self.permissions.resume_from(reader)
        read_files = ReadFileState()
        resumed = resumed_from(reader, self.transcript, read_files)
        self.loop.ctx.state.read_files = read_files
        self.warnings += [*resumed.warnings, *reader.warnings]
        self.tasks.restore(resumed.background_tasks)
        self.loop.messages[:] = resumed.messages
        self.restored_calls = resumed.calls
        self.loop.compaction.meter.reset()
        restore_todos(self.ctx.state.conversation, self.loop.messages)
        wire_checkpoints(self.loop, self.transcript, reader)  # after: a compaction's todo list
        self.start_hooks.again("resume")
        return list(self.loop.messages)

    def _reopen(self, reader: TranscriptReader) -> None:
        """``/resume``: the session continues ``reader``'s transcript (a copy of it when
        another Nerve holds it: ``transcript_open``), under its id."""
        session_id = reader.session_id or reader.path.stem
        transcript = self.transcript
        if transcript is not None:
            transcript.close()
            transcript, notices = open_transcript(
                self.cwd, session_id, git_branch=transcript.git_branch, reader=reader
            )
            self.warnings += notices
            session_id = transcript.session_id
        self._adopt(session_id, transcript)

    def _adopt(self, session_id: str, transcript: TranscriptWriter | None) -> None:
        """The conversation goes on in ``transcript`` as session ``session_id``."""
        self.session_id = session_id
        self.transcript = transcript
        self.loop.transcript = transcript
        ctx = self.loop.ctx
        session_dir = transcript.session_dir if transcript is not None else None
        self.loop.ctx = replace(
            ctx, options=replace(ctx.options, session_id=session_id, session_dir=session_dir)
        )

    # -- closing -----------------------------------------------------------------------------

    def prewarm(self) -> None:
        """Import the model SDK in the background (call after the UI's first frame); the MCP
        servers start connecting."""
        prewarm = getattr(self._model_client, "prewarm", None)
        if prewarm is not None:
            prewarm()
        self.mcp.prewarm()  # MCP servers connect while the user types

    async def close(self) -> None:
        self.notifications.disarm_idle()
        if self.reaper is not None:
            await asyncio.to_thread(self.reaper.join, 5.0)
        await self.tasks.stop_all(self.transcript)
        await self.mcp.close()
        await _session_end(self.ctx)
        aclose = getattr(self._model_client, "aclose", None)
        if aclose is not None:
            await aclose()
        if self.transcript is not None:
            self.transcript.close()
        await _end_leftovers(self.ctx)

    # -- what the session lists --------------------------------------------------------------

    def restored_messages(self) -> list[Message]:
        """The conversation the session started with (``nerve -c`` / ``-r ID``)."""
        return list(self._restored)

    def describe_call(self, name: str, tool_input: Any) -> str:
        """The header a call of ``name`` with ``tool_input`` is shown under, as live."""
        return call_header(self.loop.tools, name, tool_input)

    def settings_problems(self) -> list[str]:
        """What the settings files got wrong (``file:line:col: key: problem; what is ignored``),
        for as long as the session runs."""
        return [str(w) for w in getattr(self.settings, "warnings", ())]

    def tools(self) -> list[ToolView]:
        loaded = self.ctx.options.loaded_deferred
        return [
            ToolView(t.name, t.description, t.should_defer and t.name not in loaded, t.is_mcp)
            for t in self.ctx.options.tools
        ]

    def usage_summary(self) -> dict[str, Any]:
        u = self.loop.usage
        return {
            "input_tokens": u.total.total_input,
            "output_tokens": u.total.output,
            "cost_usd": u.cost_usd,
            # the figure compaction acts on (the API's last count plus an estimate)
            "context_tokens": self.loop.compaction.tokens(self.loop),
            "turns": u.turns,
        }

    def list_sessions(self) -> list[dict[str, Any]]:
        return resumable_sessions(self.cwd, self.session_id)

    def todos(self) -> list[dict[str, Any]]:
        """``/todos``: the main agent's todo list (TodoWrite's items, camelCase dicts)."""
        from tools.builtin.todo import current_todos

        return current_todos(self.ctx)

    def custom_commands(self) -> list[Any]:
        """What ``/`` offers besides the built-ins: custom commands and skills."""
        return [] if self.commands is None else self.commands.user_commands()

    def agent_definitions(self) -> list[Any]:
        """``/agents``: the sub-agent types (``tools.builtin.agent.AgentDefinition``)."""
        runner = self.ctx.options.services.subagent_runner
        return [] if runner is None else list(runner.agent_types())

    # -- the parts, as the port names them ---------------------------------------------------

    @property
    def mode(self) -> str:
        return self.permissions.mode

    def set_mode(self, mode: str) -> None:
        self.permissions.set_mode(mode)

    def cycle_mode(self) -> str:
        return self.permissions.cycle_mode()

    def rules(self) -> list[RuleView]:
        return self.permissions.rules()

    def add_rule(self, behavior: str, rule: str, destination: str = "localSettings") -> None:
        self.permissions.add_rule(behavior, rule, destination)

    def remove_rule(self, behavior: str, rule: str, source: str) -> bool:
        return self.permissions.remove_rule(behavior, rule, source)

    def add_directory(self, path: str) -> Path:
        return self.permissions.add_directory(path)

    def set_permission_handler(self, handler: PermissionHandler) -> None:
        self.approvals.set_handler(handler)

    def set_question_handler(self, handler: QuestionHandler) -> None:
        """AskUserQuestion's questions go to ``handler`` (the TUI's modal); without one no one
        can answer (print mode), and the tool says so to the model."""
        ctx = self.ctx
        self.loop.ctx = replace(ctx, callbacks=replace(ctx.callbacks, ask_user=handler))

    def set_model(self, model: str) -> None:
        self.models.set(model)

    def compact(self, instructions: str = "") -> AsyncIterator[AgentEvent]:
        return self.context_ops.compact(instructions)

    def context_usage(self) -> ContextUsage:
        return self.context_ops.context_usage()

    def conversation_messages(self) -> list[Message]:
        return self.context_ops.conversation_messages()

    def rewind_points(self) -> list[RewindPoint]:
        return self.context_ops.rewind_points()

    def rewind_preview(self, message_id: str) -> RewindPreview:
        return self.context_ops.rewind_preview(message_id)

    def rewind(self, message_id: str, *, conversation: bool, files: bool) -> RewindResult:
        return self.context_ops.rewind(message_id, conversation=conversation, files=files)

    def sandbox_status(self) -> dict[str, Any]:
        return self.sandbox.status()

    def set_sandbox_mode(self, mode: str) -> str:
        return self.sandbox.set_mode(mode)

    def background_tasks(self) -> list[BackgroundTaskView]:
        return self.tasks.views()

    async def notification(
        self, notification_type: str, message: str, title: str | None = "Nerve"
    ) -> list[str]:
        return await self.notifications.notify(notification_type, message, title)

    def mcp_servers(self) -> list[Any]:
        return self.mcp.servers()

    async def mcp_action(self, action: str, name: str) -> str:
        return await self.mcp.action(action, name)

    def pending_mcp_servers(self) -> list[tuple[str, str]]:
        return self.mcp.pending_approval()

    async def approve_mcp_servers(self, choice: list[str] | str) -> list[str]:
        return await self.mcp.approve(choice)

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        return self.mcp.prompts()

    def mcp_tool(self, name: str) -> Any:
        return self.mcp.tool(name)

    def attach_sdk_mcp(self, send: Any) -> None:
        self.mcp.attach_sdk(send)

    async def connect_mcp(self) -> None:
        await self.mcp.start_now()


async def _run_user_command(ctx: ToolUseContext, command: str) -> str:
    """``!command``: run as the Bash tool's runner does, in its own session, cgroup scope and
    lease, so nothing it starts (``setsid``, ``&``) outlives the command or a crash of Nerve; in
    the session's directory and environment. The end of its output."""
    from tools.process.runner import SpawnOptions, bash_path, run_in_group

    tail = bytearray()

    def keep_tail(data: bytes) -> None:
        tail.extend(data)
        del tail[:-120_000]  # only the last 30,000 characters are shown

    env = None if ctx.options.environ is None else dict(ctx.options.environ)
    outcome = await run_in_group(
        [bash_path(), "-c", command],
        cwd=ctx.cwd,  # the worktree, once the session entered one
        on_data=keep_tail,
        timeout_s=120,
        spawn=SpawnOptions(env=env, scope_kind="shell"),
    )
    out = bytes(tail)
    if outcome.timed_out:
        out += b"[timed out after 120 s]"
    return out.decode("utf-8", "replace")[-30_000:]


async def _session_end(ctx: ToolUseContext) -> None:
    """SessionEnd hooks, given five seconds."""
    hooks = ctx.hooks
    if hooks is not None and hooks.has_hooks("SessionEnd"):
        try:
            await asyncio.wait_for(hooks.run_event("SessionEnd", {"reason": "other"}), 5)
        except TimeoutError:
            pass


async def _end_leftovers(ctx: ToolUseContext) -> None:
    """Nothing Nerve started outlives it: hooks' detached jobs, escapees of ``setsid``
    (tools.process.containment), the sandbox's temp dir; then the lease goes, so the next start has
    nothing to reap."""
    from tools.process.owners import forget_own_lease
    from tools.process.reaper import close_scopes
    from tools.sandbox import get_sandbox

    await close_scopes()
    sandbox = get_sandbox(ctx)
    if sandbox is not None:
        await sandbox.close()
    forget_own_lease()
