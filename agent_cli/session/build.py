"""The composition root: settings, permissions, hooks, tools, model, transcript -> a session.

``build_session`` is the body of ``AgentSession.create``: the only place that knows every layer;
the loop, the pipeline and the engine each see only their part. It runs named stages in order,
each a function of what the earlier ones found, with a typed result:

1. ``_enter_workspace``: the directory (``--worktree`` enters a git worktree first);
2. ``_load_settings``: the settings of every layer (workspace trust decides what the project's
   may do), the session environment, the ``--mcp-config`` and ``--agents`` flags checked;
3. ``_resolve_resume``: the transcript ``-c`` / ``-r ID`` continue, if any;
4. ``_resolve_permissions``: the permission context (flags, settings, the resumed session's rules
   and mode) and the sandbox, whose boundaries join it as rules;
5. ``_open_recording``: the session id, the git probes, the transcript (new, resumed or forked);
6. ``_assemble_tools``: the hooks, custom commands and skills, the tool pool and the MCP servers,
   in one tool context;
7. ``choose_model`` (``agent_cli.session.model_setup``): the model, its client, the system
   prompt; ``_resume_conversation``: the resumed conversation, repaired, and the read-file
   state; then ``_make_loop``: the agent loop on them;
8. the session around the loop, then ``_wire``: the services its tools reach (sub-agents, skills,
   side model, classifier, worktree), its compaction policy and checkpoints.

The model client is lazy, so a session starts without importing the SDK. The stages' results
are plain classes with slots: nothing is generated for them when this module is imported, which
every start does.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.boot import gc_pause
from agent_cli.loop.agent_loop import AgentLoop, LoopConfig, SessionLinks
from agent_cli.loop.system_prompt import Environment, gather_environment
from agent_cli.options import RunOptions
from agent_cli.session.context_ops import wire_context
from agent_cli.session.custom import load_commands, pool_for_commands, wire_customizations
from agent_cli.session.environment import session_environ
from agent_cli.session.flag_extras import flag_agents, flag_thinking
from agent_cli.session.model_setup import ModelSetup, choose_model
from agent_cli.session.resume import (
    Resumed,
    SessionError,
    find_session,
    restored_permissions,
    resumed_from,
)
from agent_cli.session.transcript_open import open_transcript
from agent_cli.session.wiring import wire_classifier, wire_subagents
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter
from permissions.types import PermissionMode, PermissionRule, RuleBehavior, RuleSource
from tools.context import Callbacks, ToolOptions, ToolServices, ToolUseContext

if TYPE_CHECKING:
    from agent_cli.customize.commands import CommandSet
    from agent_cli.loop.agent_loop import ModelPort
    from agent_cli.session.agent_session import AgentSession
    from config import LoadedSettings
    from permissions.types import PermissionContext
    from tools.builtin.worktree import WorktreeSession
    from tools.hooks.runner import HookRunner
    from tools.sandbox import SandboxSession

__all__ = ["build_session"]


def build_session(
    session_cls: type[AgentSession],
    options: RunOptions,
    *,
    cwd: Path | None = None,
    interactive: bool = False,
    model_client: ModelPort | None = None,
    record: bool = True,
) -> AgentSession:
    """Build a session from flags, settings and the environment (resuming if asked): the
    stages of the module docstring, in order."""
    from tools.process.reaper import start_reaper

    record = record and not options.no_session_persistence  # nothing written to disk
    reaper = start_reaper()  # ends a killed Nerve's leftover process groups, in a thread
    place = _enter_workspace(options, cwd)
    config = _load_settings(options, place.cwd)
    reader = _resolve_resume(options, place.cwd, interactive=interactive)
    perms = _resolve_permissions(options, config.settings, place.cwd, reader)
    recording = _open_recording(options, place.cwd, reader, perms.context, record=record)
    tooling = _assemble_tools(options, config, place.cwd, perms, recording)
    model = choose_model(
        options, config.settings, model_client, config.environ, recording.env, tooling.pool
    )
    resumed = _resume_conversation(reader, recording.transcript, tooling.ctx)
    session = session_cls(
        cwd=place.cwd,
        options=options,
        settings=config.settings,
        loop=_make_loop(options, tooling.ctx, model, recording.transcript, resumed),
        transcript=recording.transcript,
        warnings=[
            *config.warnings,
            *(reader.warnings if reader is not None else ()),
            *perms.warnings,
            *recording.warnings,
            *tooling.warnings,
            *(resumed.warnings if resumed is not None else ()),
            *model.warnings,
        ],
        resumed=resumed,
        mcp=tooling.mcp,
    )
    session.reaper = reaper
    _wire(session, model.client, config, tooling, recording, place.worktree, reader)
    gc_pause.resume()  # the nerve process's start-up is over (see agent_cli.boot.gc_pause)
    return session


# -- 1. the workspace ------------------------------------------------------------------------


class Workspace:
    """Stage 1: where the session works."""

    __slots__ = ("cwd", "worktree")
    cwd: Path  # where the session works (resolved; the worktree's, with --worktree)
    worktree: WorktreeSession | None  # the one --worktree started in

    def __init__(self, cwd: Path, worktree: WorktreeSession | None) -> None:
        self.cwd = cwd
        self.worktree = worktree


def _enter_workspace(options: RunOptions, cwd: Path | None) -> Workspace:
    cwd = (cwd or Path.cwd()).resolve()
    if not options.worktree:
        return Workspace(cwd, None)
    from agent_cli.session.worktree_start import start_worktree

    # `nerve --worktree NAME`: the session starts in the worktree
    worktree = start_worktree(cwd, options.worktree)
    return Workspace(worktree.path, worktree)


# -- 2. the settings -------------------------------------------------------------------------


class Configuration:
    """Stage 2: the settings and what they set up."""

    __slots__ = ("cli_agents", "environ", "settings", "trusted", "warnings")
    settings: LoadedSettings
    trusted: bool  # the project's folder is trusted (config.trust)
    environ: dict[str, str]  # what every part reads variables from (settings env over the shell's)
    cli_agents: list[Any]  # --agents
    warnings: list[str]

    def __init__(
        self,
        settings: LoadedSettings,
        trusted: bool,
        environ: dict[str, str],
        cli_agents: list[Any],
        warnings: list[str],
    ) -> None:
        self.settings = settings
        self.trusted = trusted
        self.environ = environ
        self.cli_agents = cli_agents
        self.warnings = warnings


def _load_settings(options: RunOptions, cwd: Path) -> Configuration:
    from agent_cli.session.trust import is_trusted
    from config import SettingsError, find_project_root, load_settings

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
    environ = session_environ(settings.env)
    _check_mcp_flags(options, cwd, environ)  # a bad --mcp-config fails before anything is written
    cli_agents = flag_agents(options, warnings)  # and so does a bad --agents
    return Configuration(settings, trusted, environ, cli_agents, warnings)


def _check_mcp_flags(options: RunOptions, cwd: Path, environ: dict[str, str]) -> None:
    from tools.mcp.config import McpConfigError, parse_cli_mcp_configs

    try:
        parse_cli_mcp_configs(options.mcp_configs, cwd=cwd, environ=environ)
    except McpConfigError as exc:
        raise SessionError(str(exc)) from exc


# -- 3. the resume ---------------------------------------------------------------------------


def _resolve_resume(
    options: RunOptions, cwd: Path, *, interactive: bool
) -> TranscriptReader | None:
    """The transcript to continue (``-c``, ``-r ID``); None for a new conversation (and for a
    bare ``--resume``: the TUI's picker chooses)."""
    if not (options.continue_session or options.resume is not None):
        return None
    if options.resume == "" and not options.continue_session and not interactive:
        raise SessionError("--resume needs a session id in print mode (or use --continue)")
    if not (options.continue_session or options.resume):
        return None
    return TranscriptReader.load(find_session(cwd, options.resume or None))


# -- 4. the permissions ----------------------------------------------------------------------


class Permissions:
    """Stage 4: the permission context and the sandbox."""

    __slots__ = ("context", "sandbox", "warnings")
    context: PermissionContext  # the sandbox's boundaries included, as rules
    sandbox: SandboxSession
    warnings: list[str]

    def __init__(
        self, context: PermissionContext, sandbox: SandboxSession, warnings: list[str]
    ) -> None:
        self.context = context
        self.sandbox = sandbox
        self.warnings = warnings


def _resolve_permissions(
    options: RunOptions, settings: LoadedSettings, cwd: Path, reader: TranscriptReader | None
) -> Permissions:
    from agent_cli.session.sandbox import session_sandbox
    from permissions.from_settings import permission_context_from_settings
    from tools.sandbox import with_boundary_rules

    extra_rules = _flag_rules(options, cwd)
    warnings: list[str] = []
    restored_mode: PermissionMode | None = None
    if reader is not None:
        stored_rules, restored_mode, rule_warnings = restored_permissions(reader, cwd)
        extra_rules += stored_rules
        warnings += rule_warnings
    mode, bypass = _launch_mode(options, restored_mode)
    perm_ctx, perm_warnings = permission_context_from_settings(
        settings,
        cwd=cwd,
        mode=mode,
        extra_rules=extra_rules,
        additional_dirs=[Path(d) for d in options.add_dirs],
        bypass_available=bypass,
    )
    warnings += perm_warnings
    sandbox, sandbox_warnings = session_sandbox(settings)  # failIfUnavailable: SessionError
    warnings += sandbox_warnings
    perm_ctx = with_boundary_rules(perm_ctx, sandbox.config)  # denyRead/denyWrite as rules
    return Permissions(perm_ctx, sandbox, warnings)


def _flag_rules(options: RunOptions, cwd: Path) -> list[PermissionRule]:
    """``--allowedTools`` and ``--disallowedTools`` as rules (a bad one: SessionError)."""
    from permissions.rules import RuleSyntaxError, make_rule

    rules: list[PermissionRule] = []
    for behavior, texts in (
        (RuleBehavior.ALLOW, options.allowed_tools),
        (RuleBehavior.DENY, options.disallowed_tools),
    ):
        for text in texts:
            try:
                rules.append(make_rule(text, behavior, RuleSource.CLI, cwd))
            except RuleSyntaxError as exc:
                raise SessionError(f"bad rule {text!r}: {exc}") from exc
    return rules


def _launch_mode(
    options: RunOptions, restored: PermissionMode | None
) -> tuple[PermissionMode | None, bool]:
    """The mode to start in (the flags', else the resumed session's; None: the settings') and
    whether bypassPermissions may be entered."""
    bypass = options.dangerously_skip_permissions or options.allow_dangerously_skip_permissions
    if options.dangerously_skip_permissions:
        return PermissionMode.BYPASS, bypass
    if options.permission_mode:
        mode = PermissionMode.parse(options.permission_mode)
        return mode, bypass or mode is PermissionMode.BYPASS
    return restored, bypass


# -- 5. the recording ------------------------------------------------------------------------


class Recording:
    """Stage 5: the session's identity and transcript."""

    __slots__ = ("env", "session_id", "transcript", "warnings")
    session_id: str
    transcript: TranscriptWriter | None  # None: nothing is recorded
    env: Environment  # what the system prompt tells of the machine (the git probes)
    warnings: list[str]

    def __init__(
        self,
        session_id: str,
        transcript: TranscriptWriter | None,
        env: Environment,
        warnings: list[str],
    ) -> None:
        self.session_id = session_id
        self.transcript = transcript
        self.env = env
        self.warnings = warnings


def _open_recording(
    options: RunOptions,
    cwd: Path,
    reader: TranscriptReader | None,
    perms: PermissionContext,
    *,
    record: bool,
) -> Recording:
    session_id = _session_id(options, cwd, reader, record=record)
    env = gather_environment(cwd, perms.additional_dirs)
    if not record:
        return Recording(session_id, None, env, [])
    # A session another process is writing is forked, never shared (transcript_open).
    transcript, warnings = open_transcript(
        cwd, session_id, git_branch=env.git_branch, reader=reader, fork=options.fork_session
    )
    if failure := transcript.take_failure():  # a full or unwritable data dir
        warnings.append(failure)
    return Recording(transcript.session_id, transcript, env, warnings)


def _session_id(
    options: RunOptions, cwd: Path, reader: TranscriptReader | None, *, record: bool
) -> str:
    """Session identity: resume appends to the same file; fork copies into a new one."""
    if reader is not None and not options.fork_session:
        return reader.session_id or reader.path.stem
    session_id = options.session_id or str(uuid.uuid4())
    if options.session_id and record and _transcript_exists(cwd, session_id):
        raise SessionError(
            f"--session-id {session_id} is already in use; continue it with --resume {session_id}"
        )
    return session_id


def _transcript_exists(cwd: Path, session_id: str) -> bool:
    from agent_cli.transcripts.transcript import project_dir

    return (project_dir(cwd) / f"{session_id}.jsonl").exists()


# -- 6. the tools ----------------------------------------------------------------------------


class Tooling:
    """Stage 6: the tool context and what joins it later."""

    __slots__ = ("commands", "ctx", "mcp", "pool", "warnings")
    ctx: ToolUseContext  # the permissions, the pool, the hooks, the sandbox
    pool: list[Any]  # the tools the system prompt describes (MCP tools join at connect)
    commands: CommandSet  # custom commands and skills
    mcp: Any  # tools.mcp.McpManager, None without servers; connected before the first turn
    warnings: list[str]

    def __init__(
        self,
        ctx: ToolUseContext,
        pool: list[Any],
        commands: CommandSet,
        mcp: Any,
        warnings: list[str],
    ) -> None:
        self.ctx = ctx
        self.pool = pool
        self.commands = commands
        self.mcp = mcp
        self.warnings = warnings


def _assemble_tools(
    options: RunOptions,
    config: Configuration,
    cwd: Path,
    perms: Permissions,
    recording: Recording,
) -> Tooling:
    from tools.mcp.session_config import session_mcp
    from tools.registry import assemble_tool_pool, get_all_base_tools

    hooks = _hooks(config, cwd, recording)
    warnings = list(hooks.warnings)
    sources = options.setting_sources  # user/project/local: settings, memory, commands, agents
    commands = load_commands(cwd, project_trusted=config.trusted, sources=sources)  # and skills
    warnings += commands.warnings
    builtins = _offered_builtins(get_all_base_tools(), options.tools)
    pool = pool_for_commands(assemble_tool_pool(builtins, (), perms.context), commands)
    session_dir = recording.transcript.session_dir if recording.transcript else None
    log_root = session_dir or Path(tempfile.gettempdir()) / "nerve-mcp" / recording.session_id
    mcp, mcp_warnings = session_mcp(
        cwd,
        config.settings,
        log_dir=log_root / "mcp-logs",
        environ=config.environ,
        cli_configs=tuple(options.mcp_configs),
        strict=options.strict_mcp_config,
    )
    warnings += mcp_warnings
    ctx = ToolUseContext(
        permissions=perms.context,
        options=ToolOptions(
            tools=tuple(pool),
            session_id=recording.session_id,
            session_dir=session_dir,
            debug=options.verbose,
            services=ToolServices(sandbox=perms.sandbox),
            environ=config.environ,
        ),
        callbacks=Callbacks(),
        hooks=hooks,
    )
    return Tooling(ctx, pool, commands, mcp, warnings)


def _hooks(config: Configuration, cwd: Path, recording: Recording) -> HookRunner:
    from tools.hooks.runner import HookRunner, HookSession

    settings = config.settings
    transcript = recording.transcript
    return HookRunner(
        settings.hooks,
        policy_config=settings.policy_hooks,
        disable_all=settings.disable_all_hooks or settings.managed_hooks_only,
        session=HookSession(
            recording.session_id,
            transcript_path=str(transcript.path) if transcript else None,
            cwd=cwd,
            project_dir=settings.project_root,
        ),
        env=config.environ,
    )


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


# -- 7. the loop -----------------------------------------------------------------------------


def _resume_conversation(
    reader: TranscriptReader | None, transcript: TranscriptWriter | None, ctx: ToolUseContext
) -> Resumed | None:
    """The resumed conversation, repaired, and what the model had read (into ``ctx``)."""
    if reader is None:
        return None
    return resumed_from(reader, transcript, ctx.state.read_files)


def _make_loop(
    options: RunOptions,
    ctx: ToolUseContext,
    model: ModelSetup,
    transcript: TranscriptWriter | None,
    resumed: Resumed | None,
) -> AgentLoop:
    """The agent loop on ``model``, recording to ``transcript``, continuing ``resumed``'s
    conversation. Who answers its asks is the session's (``AgentSession.__init__``)."""
    return AgentLoop(
        model=model.client,
        model_name=model.name,
        ctx=ctx,
        system_prompt=model.system_prompt,
        config=LoopConfig(max_turns=options.max_turns, max_budget_usd=options.max_budget_usd),
        links=SessionLinks(
            transcript=transcript, messages=None if resumed is None else resumed.messages
        ),
    )


# -- 8. the wiring ---------------------------------------------------------------------------


def _wire(
    session: AgentSession,
    client: ModelPort,
    config: Configuration,
    tooling: Tooling,
    recording: Recording,
    worktree: WorktreeSession | None,
    reader: TranscriptReader | None,
) -> None:
    """What the new session's tools reach through it, and how it compacts and checkpoints."""
    from agent_cli.session.side_model import wire_side_model
    from agent_cli.session.worktree_start import attach_worktree

    wire_subagents(
        session, recording.env, client, project_trusted=config.trusted, extra=config.cli_agents
    )
    wire_customizations(session, tooling.commands, config.settings.project_root)
    wire_context(session, config.settings, reader)
    wire_classifier(session, config.settings, client)
    wire_side_model(session, client)  # WebFetch's and WebSearch's side model
    attach_worktree(session, worktree)  # the worktree ``--worktree`` started in
    session.permissions.record_mode()
    choice = flag_thinking(session.options)
    if choice is not None:  # --thinking / --max-thinking-tokens / --effort, as /model sets them
        session.loop.thinking = choice
