"""The composition root: settings, permissions, hooks, tools, model, transcript -> a session.

``AgentSession`` implements ``SessionPort`` for the TUI and drives print mode. It is the only
place that knows every layer; the loop, the pipeline and the engine each see only their part.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_cli.events import AgentEvent, Notice
from agent_cli.loop import AgentLoop, LoopConfig, ModelPort
from agent_cli.options import RunOptions
from agent_cli.prompt import build_system_prompt, gather_environment
from agent_cli.resume import (
    SessionError,
    copy_for_fork,
    find_session,
    previous_tasks,
    repair_for_resume,
)
from agent_cli.session_api import BackgroundTaskView, PermissionHandler, RuleView, ToolView
from agent_cli.transcript import TranscriptReader, TranscriptWriter, list_sessions, project_dir
from permissions.types import PermissionMode, PermissionRule, RuleBehavior, RuleSource, RuleValue
from tools.context import (
    Callbacks,
    ReadRecord,
    ToolOptions,
    ToolUseContext,
)

__all__ = ["AgentSession", "SessionError", "find_session"]


class AgentSession:
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
        self._mcp: Any = None  # tools.mcp.McpManager, connected before the first turn
        self._mcp_pending = False
        self._start_source: str | None = "resume" if messages else "startup"
        self.loop = AgentLoop(
            model=model_client,
            model_name=model_name,
            ctx=ctx,
            system_prompt=system_prompt,
            config=LoopConfig(max_turns=options.max_turns),
            transcript=transcript,
            messages=messages,
            permission_handler=self._ask,
            on_rules_to_persist=self._persist_always_rules,
        )

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
        from config import SettingsError, load_settings
        from permissions.from_settings import permission_context_from_settings
        from permissions.rules import RuleSyntaxError, make_rule
        from tools.builtin.reaper import start_reaper
        from tools.execution.hooks import HookRunner
        from tools.registry import assemble_tool_pool, get_all_base_tools

        start_reaper()  # ends a killed Nerve's leftover process groups, in a background thread
        cwd = (cwd or Path.cwd()).resolve()
        try:
            settings = load_settings(cwd, cli_settings=options.settings)
        except SettingsError as exc:
            raise SessionError(str(exc)) from exc
        warnings = list(settings.warnings)

        resume_path: Path | None = None
        if options.continue_session or options.resume is not None:
            if options.resume == "" and not options.continue_session and not interactive:
                raise SessionError("--resume needs a session id in print mode (or use --continue)")
            if options.continue_session or options.resume:
                resume_path = find_session(cwd, options.resume or None)
        reader = TranscriptReader.load(resume_path) if resume_path else None
        if reader is not None:
            warnings += reader.warnings

        extra_rules: list[PermissionRule] = []
        for behavior, texts in (
            (RuleBehavior.ALLOW, options.allowed_tools),
            (RuleBehavior.DENY, options.disallowed_tools),
        ):
            for text in texts:
                try:
                    extra_rules.append(make_rule(text, behavior, RuleSource.CLI, cwd))
                except RuleSyntaxError as exc:
                    raise SessionError(f"bad rule {text!r}: {exc}") from exc
        if reader is not None:
            for r in reader.session_rules:
                try:
                    extra_rules.append(make_rule(r["rule"], r["behavior"], RuleSource.SESSION, cwd))
                except (RuleSyntaxError, ValueError):
                    warnings.append(f"skipped a stored session rule {r!r}")

        mode: PermissionMode | None = None
        bypass = options.dangerously_skip_permissions
        if options.dangerously_skip_permissions:
            mode = PermissionMode.BYPASS
        elif options.permission_mode:
            mode = PermissionMode.parse(options.permission_mode)
            bypass = mode is PermissionMode.BYPASS
        elif reader is not None and reader.permission_mode:
            restored = PermissionMode.parse(reader.permission_mode)
            # A resumed session keeps its mode, except plan and bypass (never silently back on).
            if restored not in (PermissionMode.PLAN, PermissionMode.BYPASS):
                mode = restored
        perm_ctx, perm_warnings = permission_context_from_settings(
            settings,
            cwd=cwd,
            mode=mode,
            extra_rules=extra_rules,
            additional_dirs=[Path(d) for d in options.add_dirs],
            bypass_available=bypass,
        )
        warnings += perm_warnings

        # Session identity: resume appends to the same file; fork copies into a new one.
        if reader is not None and not options.fork_session:
            session_id = reader.session_id or (resume_path.stem if resume_path else "")
        else:
            session_id = options.session_id or str(uuid.uuid4())
        env = gather_environment(cwd, perm_ctx.additional_dirs)
        transcript: TranscriptWriter | None = None
        if record:
            path = project_dir(cwd) / f"{session_id}.jsonl"
            transcript = TranscriptWriter(
                path,
                session_id=session_id,
                cwd=cwd,
                git_branch=env.git_branch,
                last_uuid=reader.last_uuid if reader and not options.fork_session else None,
            )
            if reader is not None and options.fork_session:
                copy_for_fork(reader, transcript)

        hooks = HookRunner(
            settings.hooks,
            policy_config=settings.policy_hooks,
            disable_all=settings.disable_all_hooks or settings.managed_hooks_only,
            session_id=session_id,
            transcript_path=str(transcript.path) if transcript else None,
            cwd=cwd,
            project_dir=settings.project_root,
            env=settings.env,
        )
        warnings += list(hooks.warnings)

        pool = assemble_tool_pool(get_all_base_tools(), (), perm_ctx)
        session_dir = transcript.session_dir if transcript else None
        from tools.mcp.manager import session_mcp

        log_root = session_dir or Path(tempfile.gettempdir()) / "nerve-mcp" / session_id
        mcp, mcp_warnings = session_mcp(cwd, settings, log_dir=log_root / "mcp-logs")
        warnings += mcp_warnings
        ctx = ToolUseContext(
            permissions=perm_ctx,
            options=ToolOptions(
                tools=tuple(pool),
                session_id=session_id,
                session_dir=session_dir,
                debug=options.verbose,
            ),
            callbacks=Callbacks(),
            hooks=hooks,
        )
        if reader is not None:
            warnings += _restore_read_files(reader, ctx.state.read_files)

        model_name, client = _model(options, settings, model_client)
        system_prompt = build_system_prompt(
            env, tool_descriptions=[(t.name, t.description) for t in pool]
        )

        messages: list[dict[str, Any]] | None = None
        if reader is not None:
            messages = repair_for_resume(reader, transcript)
        session = cls(
            cwd=cwd,
            options=options,
            settings=settings,
            ctx=ctx,
            model_client=client,
            model_name=model_name,
            transcript=transcript,
            system_prompt=system_prompt,
            warnings=warnings,
            messages=messages,
            restored_tasks=reader.background_tasks if reader else None,
        )
        session._wire_subagents(env)
        if transcript is not None:
            transcript.meta("permission-mode", mode=perm_ctx.mode.value)
        session._mcp, session._mcp_pending = mcp, mcp is not None
        return session

    # -- SessionPort -------------------------------------------------------------------------

    @property
    def ctx(self) -> ToolUseContext:
        return self.loop.ctx

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

    async def run_turn(self, prompt: str) -> AsyncIterator[AgentEvent]:
        for warning in self.warnings:
            yield Notice(warning, "warning")
        self.warnings = []
        if self._mcp_pending:
            for warning in await self._connect_mcp():
                yield Notice(warning, "warning")
        if self._start_source is not None:
            async for event in self._session_start(self._start_source):
                yield event
            self._start_source = None
        recorded = self.mode
        async for event in self.loop.run_turn(prompt):
            if self.mode != recorded:
                # A tool changed the mode (EnterPlanMode, ExitPlanMode): recorded like set_mode.
                recorded = self.mode
                if self.transcript is not None:
                    self.transcript.meta("permission-mode", mode=recorded)
            yield event

    def abort(self) -> None:
        self.loop.abort()

    async def run_shell(self, command: str) -> str:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=str(self.cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            out = b"[timed out after 120 s]"
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
        if self.transcript is not None:
            self.transcript.close()
            new_id = str(uuid.uuid4())
            self.transcript = TranscriptWriter(
                self.transcript.path.with_name(f"{new_id}.jsonl"),
                session_id=new_id,
                cwd=self.cwd,
                git_branch=self.transcript.git_branch,
            )
            self.loop.transcript = self.transcript
            self.session_id = new_id
            self.loop.ctx = replace(
                self.ctx,
                options=replace(
                    self.ctx.options, session_id=new_id, session_dir=self.transcript.session_dir
                ),
            )

    def rules(self) -> list[RuleView]:
        return [
            RuleView(r.behavior.value, str(r.value), r.source.value)
            for r in self.ctx.permissions.rules
        ]

    def add_rule(self, behavior: str, rule: str, destination: str = "localSettings") -> None:
        from config import add_permission_rule, local_settings_path
        from permissions.rules import make_rule

        source = RuleSource(destination)
        new = make_rule(rule, behavior, source, self.cwd)
        if source is RuleSource.LOCAL:
            add_permission_rule(local_settings_path(self.cwd), behavior, str(new.value))
        elif source is RuleSource.SESSION:
            if self.transcript is not None:
                self.transcript.meta("session-rule", behavior=behavior, rule=str(new.value))
        else:
            raise ValueError(f"rules can be added to localSettings or session, not {destination}")
        perms = self.ctx.permissions
        self.loop.ctx = replace(self.ctx, permissions=replace(perms, rules=(*perms.rules, new)))

    def remove_rule(self, behavior: str, rule: str, source: str) -> bool:
        from config import local_settings_path, remove_permission_rule
        from permissions.rules import parse_rule

        value = parse_rule(rule)
        perms = self.ctx.permissions
        keep = tuple(
            r
            for r in perms.rules
            if not (r.behavior.value == behavior and r.value == value and r.source.value == source)
        )
        if len(keep) == len(perms.rules):
            return False
        if source == RuleSource.LOCAL.value:
            remove_permission_rule(local_settings_path(self.cwd), behavior, rule)
        elif source != RuleSource.SESSION.value:
            raise ValueError(f"rules from {source} can only be removed by editing that file")
        elif self.transcript is not None:  # or a resume would bring the rule back
            self.transcript.meta(
                "session-rule", behavior=behavior, rule=str(value), action="remove"
            )
        self.loop.ctx = replace(self.ctx, permissions=replace(perms, rules=keep))
        return True

    def tools(self) -> list[ToolView]:
        loaded = self.ctx.options.loaded_deferred
        return [
            ToolView(t.name, t.description, t.should_defer and t.name not in loaded, t.is_mcp)
            for t in self.ctx.options.tools
        ]

    def background_tasks(self) -> list[BackgroundTaskView]:
        manager = self.ctx.state.shared.get("background_tasks")
        live = [] if manager is None else manager.list()
        views = [BackgroundTaskView(s.task_id, s.command, s.status) for s in live]
        seen = {v.task_id for v in views}
        # Tasks of the run this session resumed: listed, but no longer ours to manage.
        views += [v for v in previous_tasks(self.restored_tasks) if v.task_id not in seen]
        return views

    def usage_summary(self) -> dict[str, Any]:
        u = self.loop.usage
        return {
            "input_tokens": u.total.total_input,
            "output_tokens": u.total.output,
            "cost_usd": u.cost_usd,
            "context_tokens": self._context_tokens(),
            "turns": u.turns,
        }

    def set_model(self, model: str) -> None:
        from agent_cli.model.config import resolve_model

        self.model = resolve_model(model)
        self.loop.model_name = self.model

    def list_sessions(self) -> list[dict[str, Any]]:
        from agent_cli.resume import session_title

        out = []
        for s in list_sessions(self.cwd):
            try:
                title = session_title(s.path)
            except OSError:
                title = None
            out.append(
                {
                    "session_id": s.session_id,
                    "title": title or "(empty)",
                    "mtime": s.mtime,
                    "size": s.size,
                }
            )
        return out

    async def resume(self, session_id: str) -> list[dict[str, Any]]:
        """Switch to a stored session (``/resume``): the same restoration as ``nerve -r ID``."""
        from permissions.rules import RuleSyntaxError, make_rule
        from tools.context import ReadFileState

        path = find_session(self.cwd, session_id)
        reader = TranscriptReader.load(path)
        old_branch = self.transcript.git_branch if self.transcript is not None else None
        if self.transcript is not None:
            self.transcript.close()
            self.transcript = TranscriptWriter(
                path,
                session_id=reader.session_id or path.stem,
                cwd=self.cwd,
                git_branch=old_branch,
                last_uuid=reader.last_uuid,
            )
            self.loop.transcript = self.transcript
        self.session_id = reader.session_id or path.stem
        perms = self.ctx.permissions
        rules = [r for r in perms.rules if r.source is not RuleSource.SESSION]
        for stored in reader.session_rules:
            try:
                rules.append(
                    make_rule(stored["rule"], stored["behavior"], RuleSource.SESSION, self.cwd)
                )
            except (RuleSyntaxError, ValueError):
                self.warnings.append(f"skipped a stored session rule {stored!r}")
        mode = PermissionMode.DEFAULT
        if reader.permission_mode:
            try:
                restored = PermissionMode.parse(reader.permission_mode)
            except ValueError:
                restored = PermissionMode.DEFAULT
            # never silently back in plan or bypass mode
            if restored not in (PermissionMode.PLAN, PermissionMode.BYPASS):
                mode = restored
        read_files = ReadFileState()
        self.warnings += _restore_read_files(reader, read_files)
        self.loop.ctx.state.read_files = read_files
        self.loop.ctx = replace(
            self.ctx,
            permissions=replace(perms, rules=tuple(rules), mode=mode),
            options=replace(
                self.ctx.options,
                session_id=self.session_id,
                session_dir=self.transcript.session_dir if self.transcript else None,
            ),
        )
        self.restored_tasks = list(reader.background_tasks)
        self.warnings += reader.warnings
        self.loop.messages[:] = repair_for_resume(reader, self.transcript)
        self._start_source = "resume"
        return list(self.loop.messages)

    def prewarm(self) -> None:
        """Import the model SDK in the background (call after the UI's first frame)."""
        prewarm = getattr(self._model_client, "prewarm", None)
        if prewarm is not None:
            prewarm()
        if self._mcp_pending:
            self._mcp.start_soon()  # MCP servers connect while the user types

    async def close(self) -> None:
        from tools.builtin.background import BackgroundTaskManager

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

    def mcp_servers(self) -> list[Any]:
        """``/mcp``: each configured server's status (``tools.mcp.McpServerView``)."""
        return [] if self._mcp is None else self._mcp.servers()

    # -- internals ---------------------------------------------------------------------------

    async def _connect_mcp(self) -> list[str]:
        """Start the MCP servers (once) and add their tools after the built-ins."""
        from tools.registry import assemble_tool_pool

        self._mcp_pending = False
        warnings: list[str] = await self._mcp.start()
        ctx = self.ctx
        builtins = [t for t in ctx.options.tools if not t.is_mcp]
        pool = assemble_tool_pool(builtins, self._mcp.tools(), ctx.permissions)
        self.loop.ctx = replace(ctx, options=replace(ctx.options, tools=tuple(pool)))
        return warnings

    def _wire_subagents(self, env: Any) -> None:
        """The Agent tool's runner (``tools`` cannot import the loop): child loops on this
        session's model client, usage totals and transcript (sidechain files)."""
        from agent_cli.agent_defs import load_agent_definitions
        from agent_cli.subagents import LoopSubagentRunner
        from tools.builtin.agent import RUNNER_KEY

        definitions, warnings = load_agent_definitions(self.cwd)
        self.warnings += warnings
        self.ctx.options.extra[RUNNER_KEY] = LoopSubagentRunner(
            model_client=self._model_client,
            parent_model=lambda: self.model,
            definitions=definitions,
            parent_transcript=lambda: self.transcript,
            prompt_builder=lambda tools: build_system_prompt(
                env, tool_descriptions=[(t.name, t.description) for t in tools]
            ),
            usage=self.loop.usage,
        )
        if any(t.name == "Agent" for t in self.ctx.options.tools):
            # Frozen with the rest of the prompt: the types the model may name in subagent_type.
            listing = "\n".join(f"- {d.name}: {d.description}" for d in definitions)
            self.loop.system_prompt += f"\n\nSub-agent types for the Agent tool:\n{listing}"

    async def _session_start(self, source: str) -> AsyncIterator[AgentEvent]:
        """SessionStart hooks, once, before the first prompt: their context joins the session."""
        from agent_cli.messages import system_reminder

        hooks = self.ctx.hooks
        if hooks is None or not hooks.has_hooks("SessionStart"):
            return
        outcome = await hooks.run_event(
            "SessionStart", {"source": source, "model": self.model}, match_value=source
        )
        for msg in outcome.system_messages:
            yield Notice(msg, "warning")
        for text in outcome.additional_context:
            reminder = system_reminder(f"SessionStart hook context:\n{text}", ephemeral=False)
            self.loop.messages.append(reminder)
            if self.transcript is not None:
                self.transcript.user(reminder, isMeta=True)

    async def _ask(self, prompt: Any) -> Any:
        if self._handler is None:
            return await _deny_non_interactive(prompt)
        return await self._handler(prompt)

    def _persist_always_rules(self, rules: tuple[RuleValue, ...]) -> list[str]:
        from config import local_settings_path

        notes = []
        for value in rules[:5]:
            try:
                self.add_rule("allow", str(value), "localSettings")
                path = local_settings_path(self.cwd)
                notes.append(f"Saved rule {value} to {os.path.relpath(path, self.cwd)}")
            except Exception as exc:  # a broken settings file must not end the turn
                notes.append(f"Could not save rule {value}: {exc}")
        return notes

    def _context_tokens(self) -> int:
        chars = sum(len(str(m.get("content", ""))) for m in self.loop.messages)
        return chars // 4


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


def _model(options: RunOptions, settings: Any, client: ModelPort | None) -> tuple[str, ModelPort]:
    from agent_cli.model.config import ModelConfig, resolve_model

    if client is not None:
        return resolve_model(options.model, settings.model), client
    config = ModelConfig.resolve(cli_model=options.model, settings_model=settings.model)
    return config.model, _LazyModelClient(config)


def _restore_read_files(reader: TranscriptReader, state: Any) -> list[str]:
    """Put back what the model had read, so an unchanged file can be edited without a re-read
    (Edit still refuses a file whose mtime and content changed since)."""
    warnings = []
    for rec in reader.read_file_state:
        try:
            state.record(
                ReadRecord(
                    Path(rec["path"]),
                    str(rec["content_hash"]),
                    int(rec["mtime_ns"]),
                    bool(rec.get("partial", False)),
                )
            )
        except (KeyError, TypeError, ValueError):
            warnings.append("skipped a malformed read-file-state entry")
    return warnings


def _import_client() -> Any:
    """Import the model client (and the SDK). The SDK builds ~1,500 pydantic models at import;
    pausing the cyclic GC meanwhile saves ~15% of that, and freezing them keeps later
    collections from walking them again."""
    import gc
    import sys

    if "agent_cli.model.client" not in sys.modules:
        enabled = gc.isenabled()
        gc.disable()
        try:
            import agent_cli.model.client  # noqa: F401
        finally:
            if enabled:
                gc.enable()
            gc.freeze()
    from agent_cli.model.client import ModelClient

    return ModelClient


class _LazyModelClient:
    """Builds the real client (and imports the SDK, ~0.7 s) on the first request, not at start.

    ``prewarm()`` imports it in a background thread, so a UI can start it right after its first
    frame and have it ready by the time the user has typed a prompt.
    """

    def __init__(self, config: Any) -> None:
        self.config = config
        self._client: Any = None

    @staticmethod
    def prewarm() -> None:
        import threading

        threading.Thread(target=_import_client, name="nerve-prewarm", daemon=True).start()

    def _real(self) -> Any:
        if self._client is None:
            self._client = _import_client()(self.config)
        return self._client

    async def stream_turn(self, *args: Any, **kwargs: Any) -> Any:
        return await self._real().stream_turn(*args, **kwargs)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
