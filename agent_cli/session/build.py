"""The composition root: settings, permissions, hooks, tools, model, transcript -> a session.

``build_session`` is the body of ``AgentSession.create``: the only place that knows every layer;
the loop, the pipeline and the engine each see only their part. The model client is lazy, so a
session starts without importing the SDK.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.boot import gc_pause
from agent_cli.loop.system_prompt import build_system_prompt, gather_environment
from agent_cli.options import RunOptions
from agent_cli.session.context_ops import wire_context
from agent_cli.session.custom import load_commands, pool_for_commands, wire_customizations
from agent_cli.session.environment import session_environ
from agent_cli.session.flag_extras import flag_agents, flag_thinking
from agent_cli.session.restored_calls import restored_calls
from agent_cli.session.resume import (
    SessionError,
    find_session,
    repair_for_resume,
    restored_permissions,
)
from agent_cli.session.transcript_open import open_transcript
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter
from permissions.types import PermissionMode, PermissionRule, RuleBehavior, RuleSource
from tools.context import Callbacks, ReadRecord, ToolOptions, ToolUseContext

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import ModelPort
    from agent_cli.session.agent_session import AgentSession

__all__ = ["build_session", "restore_read_files"]

_CLASSIFIER_KEY = "classifier"  # = agent_cli.auto.classifier.CLASSIFIER_KEY, without the import


def build_session(
    session_cls: type[AgentSession],
    options: RunOptions,
    *,
    cwd: Path | None = None,
    interactive: bool = False,
    model_client: ModelPort | None = None,
    record: bool = True,
) -> AgentSession:
    """Build a session from flags, settings and the environment (resuming if asked)."""
    from agent_cli.session.trust import is_trusted
    from config import SettingsError, find_project_root, load_settings
    from permissions.from_settings import permission_context_from_settings
    from permissions.rules import RuleSyntaxError, make_rule
    from tools.hooks.runner import HookRunner
    from tools.process.reaper import start_reaper
    from tools.registry import assemble_tool_pool, get_all_base_tools

    record = record and not options.no_session_persistence  # nothing written to disk
    # ends a killed Nerve's leftover process groups, in a background thread
    reaper = start_reaper()
    cwd = (cwd or Path.cwd()).resolve()
    worktree = None
    if options.worktree:  # `nerve --worktree NAME`: the session starts in the worktree
        from agent_cli.session.worktree_start import start_worktree

        worktree = start_worktree(cwd, options.worktree)
        cwd = worktree.path
    try:
        # Workspace trust: an untrusted project's files only restrict (config.trust).
        trusted = is_trusted(find_project_root(cwd))
        settings = load_settings(
            cwd,
            cli_settings=options.settings,
            project_trusted=trusted,
            sources=None if options.setting_sources is None else set(options.setting_sources),
        )
    except SettingsError as exc:
        raise SessionError(str(exc)) from exc
    warnings = list(settings.warnings)
    # What every part of the session reads variables from (settings env over the shell's).
    environ = session_environ(settings.env)
    _check_mcp_flags(options, cwd, environ)  # a bad --mcp-config fails before anything is written
    cli_agents = flag_agents(options, warnings)  # and so does a bad --agents

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
    restored_mode: PermissionMode | None = None
    if reader is not None:
        stored_rules, restored_mode, rule_warnings = restored_permissions(reader, cwd)
        extra_rules += stored_rules
        warnings += rule_warnings

    mode: PermissionMode | None = None
    bypass = options.dangerously_skip_permissions or options.allow_dangerously_skip_permissions
    if options.dangerously_skip_permissions:
        mode = PermissionMode.BYPASS
    elif options.permission_mode:
        mode = PermissionMode.parse(options.permission_mode)
        bypass = bypass or mode is PermissionMode.BYPASS
    else:
        mode = restored_mode
    perm_ctx, perm_warnings = permission_context_from_settings(
        settings,
        cwd=cwd,
        mode=mode,
        extra_rules=extra_rules,
        additional_dirs=[Path(d) for d in options.add_dirs],
        bypass_available=bypass,
    )
    warnings += perm_warnings
    from agent_cli.session.sandbox import session_sandbox
    from tools.sandbox import SANDBOX_KEY, with_boundary_rules

    sandbox, sandbox_warnings = session_sandbox(settings)  # failIfUnavailable: SessionError
    warnings += sandbox_warnings
    perm_ctx = with_boundary_rules(perm_ctx, sandbox.config)  # denyRead/denyWrite as rules

    # Session identity: resume appends to the same file; fork copies into a new one.
    if reader is not None and not options.fork_session:
        session_id = reader.session_id or (resume_path.stem if resume_path else "")
    else:
        session_id = options.session_id or str(uuid.uuid4())
        if options.session_id and record and _transcript_exists(cwd, session_id):
            raise SessionError(
                f"--session-id {session_id} is already in use; continue it with --resume {session_id}"
            )
    env = gather_environment(cwd, perm_ctx.additional_dirs)
    transcript: TranscriptWriter | None = None
    if record:
        # A session another process is writing is forked, never shared (transcript_open).
        transcript, notices = open_transcript(
            cwd, session_id, git_branch=env.git_branch, reader=reader, fork=options.fork_session
        )
        session_id = transcript.session_id
        warnings += notices
        if failure := transcript.take_failure():  # a full or unwritable data dir
            warnings.append(failure)

    hooks = HookRunner(
        settings.hooks,
        policy_config=settings.policy_hooks,
        disable_all=settings.disable_all_hooks or settings.managed_hooks_only,
        session_id=session_id,
        transcript_path=str(transcript.path) if transcript else None,
        cwd=cwd,
        project_dir=settings.project_root,
        env=environ,
    )
    warnings += list(hooks.warnings)

    sources = options.setting_sources  # user/project/local: settings, memory, commands, agents
    commands = load_commands(cwd, project_trusted=trusted, sources=sources)  # and skills
    warnings += commands.warnings
    builtins = _offered_builtins(get_all_base_tools(), options.tools)
    pool = pool_for_commands(assemble_tool_pool(builtins, (), perm_ctx), commands)
    session_dir = transcript.session_dir if transcript else None
    from tools.mcp.session_config import session_mcp

    log_root = session_dir or Path(tempfile.gettempdir()) / "nerve-mcp" / session_id
    mcp, mcp_warnings = session_mcp(
        cwd,
        settings,
        log_dir=log_root / "mcp-logs",
        environ=environ,
        cli_configs=tuple(options.mcp_configs),
        strict=options.strict_mcp_config,
    )
    warnings += mcp_warnings
    ctx = ToolUseContext(
        permissions=perm_ctx,
        options=ToolOptions(
            tools=tuple(pool),
            session_id=session_id,
            session_dir=session_dir,
            debug=options.verbose,
            extra={SANDBOX_KEY: sandbox},
            environ=environ,
        ),
        callbacks=Callbacks(),
        hooks=hooks,
    )
    if reader is not None:
        warnings += restore_read_files(reader, ctx.state.read_files)

    model_name, client = _model(options, settings, model_client, environ, warnings)
    system_prompt = build_system_prompt(
        env,
        tool_descriptions=[(t.name, t.description) for t in pool],
        warnings=warnings,
        replace=options.system_prompt or None,  # --system-prompt "" keeps the default
        append=options.append_system_prompt or None,
        sources=sources,
    )

    messages: list[dict[str, Any]] | None = None
    if reader is not None:
        messages = repair_for_resume(reader, transcript)
    session = session_cls(
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
        mcp=mcp,
    )
    if reader is not None:  # how the resumed calls were shown (session.restored_calls)
        session.restored_calls = restored_calls(reader.records)
    _wire_subagents(session, env, client, project_trusted=trusted, extra=cli_agents)
    wire_customizations(session, commands, settings.project_root)
    wire_context(session, settings, reader)
    _wire_classifier(session, settings, client)
    _wire_tool_ports(session, client, worktree)
    if transcript is not None:
        transcript.meta("permission-mode", mode=perm_ctx.mode.value)
    session.reaper = reaper
    choice = flag_thinking(options)
    if choice is not None:  # --thinking / --max-thinking-tokens / --effort, as /model sets them
        session.loop.thinking = choice
    gc_pause.resume()  # the nerve process's start-up is over (see agent_cli.boot.gc_pause)
    return session


def _offered_builtins(tools: list[Any], names: list[str] | None) -> list[Any]:
    """``--tools``: only the named built-ins (by name or alias); ``None`` = all of them."""
    if names is None:
        return tools
    by_name = {alias: t for t in tools for alias in t.all_names}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        known = ", ".join(sorted(t.name for t in tools))
        raise SessionError(f"--tools: unknown tool(s) {', '.join(unknown)} (built-ins: {known})")
    chosen = {by_name[n].name for n in names}
    return [t for t in tools if t.name in chosen]


def _transcript_exists(cwd: Path, session_id: str) -> bool:
    from agent_cli.transcripts.transcript import project_dir

    return (project_dir(cwd) / f"{session_id}.jsonl").exists()


def _check_mcp_flags(options: RunOptions, cwd: Path, environ: dict[str, str]) -> None:
    from tools.mcp.config import McpConfigError, parse_cli_mcp_configs

    try:
        parse_cli_mcp_configs(options.mcp_configs, cwd=cwd, environ=environ)
    except McpConfigError as exc:
        raise SessionError(str(exc)) from exc


def restore_read_files(reader: TranscriptReader, state: Any) -> list[str]:
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


def _wire_subagents(
    session: AgentSession,
    env: Any,
    model_client: ModelPort,
    *,
    project_trusted: bool = True,
    extra: Sequence[Any] = (),
) -> None:
    """The Agent tool's runner (``tools`` cannot import the loop): child loops on this
    session's model client, usage totals and transcript (sidechain files)."""
    from agent_cli.agents.runner import LoopSubagentRunner
    from agent_cli.customize.agents import load_agent_definitions
    from agent_cli.customize.cli_agents import merge_agents
    from tools.builtin.agent import RUNNER_KEY

    sources = session.options.setting_sources
    definitions, warnings = load_agent_definitions(
        session.cwd, project_trusted=project_trusted, sources=sources
    )
    session.warnings += warnings
    definitions = merge_agents(definitions, extra)  # --agents win by name
    session.ctx.options.extra[RUNNER_KEY] = LoopSubagentRunner(
        model_client=model_client,
        parent_model=lambda: session.model,
        definitions=definitions,
        parent_transcript=lambda: session.transcript,
        prompt_builder=lambda tools: build_system_prompt(
            env, tool_descriptions=[(t.name, t.description) for t in tools], sources=sources
        ),
        usage=session.loop.usage,
    )
    if any(t.name == "Agent" for t in session.ctx.options.tools):
        # Frozen with the rest of the prompt: the types the model may name in subagent_type.
        listing = "\n".join(f"- {d.name}: {d.description}" for d in definitions)
        session.loop.system_prompt += f"\n\nSub-agent types for the Agent tool:\n{listing}"


def _wire_classifier(session: AgentSession, settings: Any, model_client: ModelPort) -> None:
    """The auto-mode safety classifier (the pipeline starts it only in auto mode): on this
    session's model client, reading the user's request from the live conversation, its tokens
    counted in the session's usage. Sub-agents share it through ``options.extra``. Built on
    first use: a session that never enters auto mode does not import it (start-up time)."""
    extras = dict(settings.merged.extras())
    environ = session.ctx.options.environ
    environ = dict(environ) if environ is not None else None  # as at start

    def build() -> Any:
        from agent_cli.auto.classifier import ClassifierConfig, ModelSafetyClassifier

        return ModelSafetyClassifier(
            model_client,
            config=ClassifierConfig.from_settings(extras, environ),
            main_model=lambda: session.model,
            conversation=lambda: session.loop.messages,
            on_usage=lambda model, usage: session.loop.usage.add(model, usage),
        )

    session.ctx.options.extra[_CLASSIFIER_KEY] = _LazyClassifier(build)


class _LazyClassifier:
    """Stands for the classifier ``build()`` makes on the first ``classify`` or attribute (read
    or set)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._real: Any = None

    def _get(self) -> Any:
        if self._real is None:
            self._real = self._build()
        return self._real

    async def classify(self, *args: Any, **kwargs: Any) -> Any:
        return await self._get().classify(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._get(), name, value)


def _wire_tool_ports(session: AgentSession, client: ModelPort, worktree: Any) -> None:
    """WebFetch's and WebSearch's side model; the worktree ``--worktree`` started in."""
    from agent_cli.session.side_model import wire_side_model
    from agent_cli.session.worktree_start import attach_worktree

    wire_side_model(session, client)
    attach_worktree(session, worktree)


def _model(
    options: RunOptions,
    settings: Any,
    client: ModelPort | None,
    environ: dict[str, str],
    warnings: list[str],
) -> tuple[str, ModelPort]:
    from agent_cli.model.config import ModelConfig, resolve_model

    if client is not None:
        return resolve_model(options.model, settings.model, environ), client
    config = ModelConfig.resolve(
        cli_model=options.model,
        settings_model=settings.model,
        api_key_helper=settings.merged.apiKeyHelper,
        env=environ,
    )
    from dataclasses import replace

    from agent_cli.model.thinking import effort_level

    extras = settings.merged.extras()
    effort, warning = effort_level(
        environ.get("CLAUDE_CODE_EFFORT_LEVEL"), extras.get("effortLevel")
    )
    if warning:
        warnings.append(warning)
    always = extras.get("alwaysThinkingEnabled") is True
    config = replace(config, always_thinking=always, effort=effort)
    if options.fallback_model:
        from agent_cli.model.names import expand_alias

        fallback = expand_alias(options.fallback_model, environ)
        if fallback == config.model:
            raise SessionError(f"--fallback-model {fallback} is the main model; name another one")
        config = replace(config, fallback_model=fallback)
    return config.model, _LazyModelClient(config)


def _import_client() -> Any:
    """Import the model client (and httpx; the SDK only for Bedrock/Vertex, which builds ~1,500
    pydantic models at import: pausing the cyclic GC meanwhile saves ~15% of that, and freezing
    them keeps later collections from walking them again)."""
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
    """Builds the real client (importing httpx) on the first request, not at start.

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
