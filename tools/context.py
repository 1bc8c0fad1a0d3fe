"""ToolUseContext: what a tool call can see, grouped by concern.

* ``options``   — configuration set once per request (tool pool, model, flags, session dir), and
                  ``options.services``: the session's services (:class:`ToolServices`).
* ``state``     — runtime state shared along a conversation (abort signal, read-file state,
                  messages), and ``state.conversation``: what tools keep along it
                  (:class:`ConversationState`).
* ``callbacks`` — the UI port: progress, notifications, permission prompts. Headless defaults
                  deny every ask, so a context without a UI fails closed.
* ``agent``     — who is running (agent id) and the frozen system prompt.

The context is immutable at the top level: a tool changes what later tools see only through
``ToolResult.context_modifier`` (``dataclasses.replace`` on a copy).

A service or a piece of state is a typed field, never a string key: each service is typed by the
port its user in ``tools/`` declares (``agent_cli`` provides the implementations), imported here
only for the type checker, so this start-up module loads none of them.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from permissions.types import PermissionContext, PermissionMode, RuleValue, Verdict
from tools.questions import QuestionPrompt, QuestionResponse, no_one_to_ask
from tools.records import datarecord

if TYPE_CHECKING:
    from tools.base import Tool
    from tools.builtin._git_worktree import WorktreeSession
    from tools.builtin._web_cache import PageCache
    from tools.builtin._web_http import FetchLimits
    from tools.builtin.agent import SubagentRunner
    from tools.builtin.skill import SkillCatalog
    from tools.file_context import FileContextProvider
    from tools.hooks.types import HookRunnerProtocol
    from tools.messages import Message
    from tools.pipeline.file_watch import FileWatch
    from tools.pipeline.types import SafetyClassifier
    from tools.process.background import BackgroundTaskManager
    from tools.sandbox.session import SandboxSession
    from tools.side_model import SideModel

__all__ = [
    "AbortSignal",
    "AgentContext",
    "Callbacks",
    "ConversationState",
    "PermissionAnswer",
    "PermissionPrompt",
    "PermissionResponse",
    "ReadFileState",
    "ReadRecord",
    "RuntimeState",
    "ToolOptions",
    "ToolServices",
    "ToolUseContext",
    "content_hash",
    "create_subagent_context",
]


class AbortSignal:
    """A cancellable flag shared by a turn; children are aborted when their parent is."""

    def __init__(self, parent: AbortSignal | None = None) -> None:
        self._event = asyncio.Event()
        self.reason: str | None = None
        self._children: list[AbortSignal] = []
        if parent is not None:
            parent._children.append(self)
            if parent.aborted:
                self.abort(parent.reason)

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def abort(self, reason: str | None = "interrupted") -> None:
        if self._event.is_set():
            return
        self.reason = reason
        self._event.set()
        for child in self._children:
            child.abort(reason)

    async def wait(self) -> None:
        await self._event.wait()

    def child(self) -> AbortSignal:
        return AbortSignal(self)


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return hashlib.sha256(data).hexdigest()


@datarecord(frozen=True, slots=True)
class ReadRecord:
    """What the model has seen of a file: the hash and mtime at read time, whole or partial."""

    path: Path
    content_hash: str
    mtime_ns: int
    partial: bool = False
    timestamp: float = 0.0


class ReadFileState:
    """LRU of files the model has read (or written); Edit/Write consult it before writing."""

    def __init__(self, max_entries: int = 500) -> None:
        self.max_entries = max_entries
        self._records: OrderedDict[Path, ReadRecord] = OrderedDict()

    def record(self, rec: ReadRecord) -> None:
        self._records[rec.path] = rec
        self._records.move_to_end(rec.path)
        while len(self._records) > self.max_entries:
            self._records.popitem(last=False)

    def get(self, path: Path) -> ReadRecord | None:
        rec = self._records.get(path)
        if rec is not None:
            self._records.move_to_end(path)
        return rec

    def forget(self, path: Path) -> None:
        self._records.pop(path, None)

    def records(self) -> list[ReadRecord]:
        return list(self._records.values())

    def clone(self) -> ReadFileState:
        other = ReadFileState(self.max_entries)
        other._records = OrderedDict(self._records)
        return other

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, path: object) -> bool:
        return path in self._records


class PermissionAnswer(StrEnum):
    ALLOW = "allow"
    ALLOW_ALWAYS = "allow_always"  # and save the suggested rules
    DENY = "deny"


@datarecord(frozen=True, slots=True)
class PermissionPrompt:
    """What the UI shows when the engine asks: tool, exact input, why, and what to remember."""

    tool_name: str
    tool_use_id: str
    input: dict[str, Any]
    verdict: Verdict
    title: str = ""
    preview: str | None = None  # a diff for edits, the sed preview, ...
    agent_id: str | None = None


@datarecord(frozen=True, slots=True)
class PermissionResponse:
    answer: PermissionAnswer
    feedback: str | None = None
    rules: tuple[RuleValue, ...] = ()
    updated_input: dict[str, Any] | None = None

    @property
    def allowed(self) -> bool:
        return self.answer is not PermissionAnswer.DENY


async def _deny_headless(prompt: PermissionPrompt) -> PermissionResponse:
    return PermissionResponse(
        PermissionAnswer.DENY,
        feedback=f"{prompt.tool_name} needs permission and no one is here to grant it",
    )


def _noop(*_args: Any, **_kwargs: Any) -> None:
    return None


@datarecord(frozen=True, slots=True)
class Callbacks:
    """The UI port. Headless (the default) shows nothing and denies every ask."""

    on_progress: Callable[[str, Any], None] = _noop  # (tool_use_id, progress)
    notify: Callable[[str], None] = _noop
    request_permission: Callable[[PermissionPrompt], Awaitable[PermissionResponse]] = _deny_headless
    on_event: Callable[[Any], None] = _noop  # telemetry-safe events (errors, hooks)
    # AskUserQuestion's questions; None back means no one can answer (print mode, headless).
    ask_user: Callable[[QuestionPrompt], Awaitable[QuestionResponse | None]] = no_one_to_ask


@datarecord(slots=True)
class ToolServices:
    """The session's services a tool call may use; None: not in this session (a bare pipeline).

    One object shared by reference: the session wires its services in after the context is
    built, and a sub-agent (whose options are a copy) sees the very same object. A context
    modifier never mutates it: it replaces it (``dataclasses.replace``), as EnterWorktree does.
    """

    sandbox: SandboxSession | None = None  # Bash's OS sandbox (tools.sandbox)
    classifier: SafetyClassifier | None = None  # auto mode's judge (pipeline steps 5 and 8)
    subagent_runner: SubagentRunner | None = None  # the Agent tool's child loops
    side_model: SideModel | None = None  # WebFetch's and WebSearch's model outside the chat
    file_context: FileContextProvider | None = None  # what the Read tool attaches to a file
    skills: SkillCatalog | None = None  # what the Skill tool loads
    worktree: WorktreeSession | None = None  # the worktree the session works in
    fetch_limits: FetchLimits | None = None  # WebFetch's bounds (None: the defaults)


@datarecord(frozen=True, slots=True)
class ToolOptions:
    """Set once per request; read-only during a call."""

    tools: Sequence[Tool] = ()
    model: str = ""
    session_id: str = ""
    session_dir: Path | None = None  # tool-results/ lives here
    loaded_deferred: frozenset[str] = frozenset()
    debug: bool = False
    services: ToolServices = field(default_factory=ToolServices)
    # The session environment for commands the tools start (the shell's, with settings ``env``
    # over it); None: this process's own environment.
    environ: Mapping[str, str] | None = None


@datarecord(slots=True)
class ConversationState:
    """What the tools keep along one agent's conversation, one field per piece.

    A sub-agent gets a shallow copy (:func:`create_subagent_context`): the objects in it (the
    background task manager, the file watch, a web cache) stay the parent's, so session end
    reaches the child's tasks and its edits are checkpointed with the turn that ran them; a value
    the child assigns (its shell's cwd, its todo list) is its own. So a tool assigns a new value,
    never mutates the old one in place.
    """

    bash_cwd: Path | None = None  # where the next Bash command starts (tools.builtin.bash.cwd)
    todos: list[dict[str, Any]] | None = None  # TodoWrite's list (None: never written)
    todos_owner: str | None = None  # the agent that wrote ``todos`` (None: the main agent)
    background_tasks: BackgroundTaskManager | None = None  # made on first use (get_manager)
    file_watch: FileWatch | None = None  # the session's checkpoint store (pipeline step 10)
    web_cache: PageCache[object] | None = None  # WebFetch's own cache (None: the process's)


@datarecord(slots=True)
class RuntimeState:
    """Mutable state shared along a conversation (not per call)."""

    abort: AbortSignal = field(default_factory=AbortSignal)
    read_files: ReadFileState = field(default_factory=ReadFileState)
    messages: list[Message] = field(default_factory=list)
    conversation: ConversationState = field(default_factory=ConversationState)


@datarecord(frozen=True, slots=True)
class AgentContext:
    agent_id: str | None = None
    system_prompt: str = ""  # frozen: re-rendering could drift and break the prompt cache
    parent_agent_id: str | None = None


@datarecord(frozen=True, slots=True)
class ToolUseContext:
    """The context of one tool call (see module docstring)."""

    permissions: PermissionContext = field(default_factory=PermissionContext)
    options: ToolOptions = field(default_factory=ToolOptions)
    state: RuntimeState = field(default_factory=RuntimeState)
    callbacks: Callbacks = field(default_factory=Callbacks)
    agent: AgentContext = field(default_factory=AgentContext)
    hooks: HookRunnerProtocol | None = None  # None: no hooks

    @property
    def cwd(self) -> Path:
        return self.permissions.cwd

    @property
    def abort(self) -> AbortSignal:
        return self.state.abort

    def with_mode(self, mode: PermissionMode) -> ToolUseContext:
        return replace(self, permissions=replace(self.permissions, mode=mode))

    def with_cwd(self, cwd: Path) -> ToolUseContext:
        return replace(self, permissions=replace(self.permissions, cwd=cwd))


def create_subagent_context(
    parent: ToolUseContext,
    *,
    agent_id: str,
    system_prompt: str,
    tools: Sequence[Tool] | None = None,
    bubble_permissions: bool = True,
) -> ToolUseContext:
    """A child context: each field either shared with the parent or fresh, on purpose."""
    perms = parent.permissions
    if bubble_permissions and perms.mode is PermissionMode.DEFAULT:
        # The child has no terminal: its asks rise to the parent's prompt (bubble mode). Other
        # modes are kept as they are (a plan-mode parent's child must not write; an
        # acceptEdits parent's child may edit); their asks reach the parent's UI the same way,
        # through the shared callbacks.
        perms = replace(perms, mode=PermissionMode.BUBBLE)
    return ToolUseContext(
        permissions=perms,
        # Options are copied, the tool set may be narrowed; the session dir is shared so the
        # child's persisted results land beside the parent's transcript, and the services
        # object is the parent's own.
        options=replace(
            parent.options, tools=tuple(tools) if tools is not None else parent.options.tools
        ),
        state=RuntimeState(
            # Abort is a child: Esc in the parent stops the child, the child cannot stop the parent.
            abort=parent.state.abort.child(),
            # Read-file state is cloned: the child may edit files the parent read, but what the
            # child reads does not count as read by the parent.
            read_files=parent.state.read_files.clone(),
            # A fresh conversation: the child never sees (or corrupts) the parent's messages.
            messages=[],
            # A shallow copy: objects in it (the background task manager) stay shared so they
            # are all ended at session end, but a value the child sets (its shell's cwd) is its own.
            conversation=replace(parent.state.conversation),
        ),
        # Callbacks are shared: progress and bubbled prompts reach the same UI.
        callbacks=parent.callbacks,
        agent=AgentContext(
            agent_id=agent_id, system_prompt=system_prompt, parent_agent_id=parent.agent.agent_id
        ),
        # Hooks are shared: policy applies to sub-agents too.
        hooks=parent.hooks,
    )
