"""Sub-agents: the ``SubagentRunner`` the Agent tool calls, built on a child ``AgentLoop``.

A child gets:

* its own conversation (a fresh message list) and a frozen system prompt per agent type;
* a context from ``create_subagent_context``: read-file state cloned, shared services, hooks
  shared (with Stop mapped to SubagentStop), and permission asks that bubble to the parent's
  ``request_permission`` — the same TUI modal, or print mode's denial — with a title naming the
  agent;
* the parent's tools minus Agent (no recursion) and the plan-mode tools, narrowed to the agent
  type's ``tools`` when it lists them;
* its own sidechain transcript ``<session>/subagents/agent-<id>.jsonl`` (``isSidechain``,
  ``agentId``); the parent's transcript holds only the Agent tool_use and tool_result;
* the parent's abort: Esc in the parent aborts the child's loop, which answers every tool_use of
  its own conversation before it ends.

Progress goes to the parent as :class:`AgentProgress` (the child's current step, such as
``Read(src/x.py)``). Usage is added to the session's totals.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_cli.customize.agents import find_agent
from agent_cli.loop.agent_loop import AgentLoop, LoopConfig, ModelPort, SessionLinks
from agent_cli.loop.events import ErrorEvent, PermissionAsked, ToolStarted, TurnFinished
from agent_cli.model.usage import SessionUsage
from agent_cli.transcripts.transcript import TranscriptWriter
from permissions.types import PermissionMode
from tools.base import ProgressFn, Tool
from tools.builtin.agent import (
    DEFAULT_SUBAGENT_TYPE,
    AgentDefinition,
    AgentProgress,
    SubagentResult,
)
from tools.context import PermissionPrompt, PermissionResponse, ToolUseContext
from tools.context import create_subagent_context as _create_context

__all__ = ["EXCLUDED_TOOLS", "LoopSubagentRunner", "child_mode", "child_tools"]

# Never offered to a child: no recursion; plan mode and the worktree belong to the main
# conversation.
EXCLUDED_TOOLS = frozenset(
    {"Agent", "EnterPlanMode", "ExitPlanMode", "EnterWorktree", "ExitWorktree"}
)
DEFAULT_MAX_TURNS = 100
_RECENT_STEPS = 3
# After the parent's abort, how long the child may take to answer its tool_uses and stop (the
# pipeline waits CANCEL_GRACE_SECONDS = 2 s for a cancelled tool).
_ABORT_GRACE_SECONDS = 1.5
# Modes a child keeps from its parent as they are (default becomes bubble).
_KEPT_MODES = frozenset(
    {
        PermissionMode.ACCEPT_EDITS,
        PermissionMode.PLAN,
        PermissionMode.AUTO,
        PermissionMode.BYPASS,
        PermissionMode.DONT_ASK,
    }
)
_STRICTER_MODES = frozenset({PermissionMode.PLAN, PermissionMode.DONT_ASK})


def child_tools(parent_tools: Sequence[Tool[Any]], definition: AgentDefinition) -> list[Tool[Any]]:
    """The parent's pool minus the excluded tools, narrowed to the definition's list."""
    pool = [t for t in parent_tools if not (set(t.all_names) & EXCLUDED_TOOLS)]
    if definition.tools is None:
        return pool
    wanted = set(definition.tools)
    return [t for t in pool if set(t.all_names) & wanted]


def child_mode(parent: PermissionMode, definition: AgentDefinition) -> PermissionMode:
    """The child's permission mode: a parent in plan mode keeps the child in plan mode; an agent
    type may ask for a stricter mode (plan, dontAsk) or acceptEdits, never for bypass unless
    the parent already bypasses; otherwise the parent's mode, with default becoming bubble."""
    if parent is PermissionMode.PLAN:
        return PermissionMode.PLAN
    wanted: PermissionMode | None = None
    if definition.permission_mode:
        try:
            wanted = PermissionMode.parse(definition.permission_mode)
        except ValueError:
            wanted = None
    if wanted in _STRICTER_MODES:
        return wanted  # type: ignore[return-value]
    if wanted is PermissionMode.ACCEPT_EDITS and parent in (
        PermissionMode.DEFAULT,
        PermissionMode.BUBBLE,
    ):
        return PermissionMode.ACCEPT_EDITS
    if parent in _KEPT_MODES:
        return parent
    return PermissionMode.BUBBLE


class _SubagentHooks:
    """The parent's hooks as a child sees them: UserPromptSubmit does not fire for the child's
    task, and its Stop is the SubagentStop event (with the agent's id and type)."""

    def __init__(self, inner: Any, agent_id: str, agent_type: str, transcript: Path | None):
        self._inner = inner
        self._extra = {
            "agent_id": agent_id,
            "agent_type": agent_type,
            "agent_transcript_path": str(transcript) if transcript else None,
        }
        self._agent = {"agent_id": agent_id, "agent_type": agent_type}

    def has_hooks(self, event: str) -> bool:
        if event == "UserPromptSubmit":
            return False
        if event == "Stop":
            event = "SubagentStop"
        return bool(self._inner.has_hooks(event))

    # The child's tool calls name it, so a hook (an SDK callback) can tell parallel agents apart.
    async def pre_tool_use(self, **kw: Any) -> Any:
        return await self._inner.pre_tool_use(**kw, agent=self._agent)

    async def post_tool_use(self, **kw: Any) -> Any:
        return await self._inner.post_tool_use(**kw, agent=self._agent)

    async def post_tool_use_failure(self, **kw: Any) -> Any:
        return await self._inner.post_tool_use_failure(**kw, agent=self._agent)

    async def permission_request(self, **kw: Any) -> Any:
        return await self._inner.permission_request(**kw, agent=self._agent)

    async def run_event(self, event: str, payload: dict[str, Any], **kw: Any) -> Any:
        if event == "Stop":
            return await self._inner.run_event("SubagentStop", {**payload, **self._extra}, **kw)
        return await self._inner.run_event(event, payload, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def _subagent_start(ctx: ToolUseContext, prompt: str, agent_id: str, agent_type: str) -> str:
    """SubagentStart hooks (Claude Code's event): their context joins the child's task."""
    hooks = ctx.hooks
    if hooks is None or not getattr(hooks, "has_hooks", lambda _e: True)("SubagentStart"):
        return prompt
    try:
        out = await hooks.run_event(
            "SubagentStart", {"agent_id": agent_id, "agent_type": agent_type}
        )
    except Exception:  # the runner never raises for one hook; be safe for other runners
        return prompt
    for message in out.system_messages:
        try:
            ctx.callbacks.notify(message)
        except Exception:
            pass
    if not out.additional_context:
        return prompt
    context = "\n".join(out.additional_context)
    return (
        f"{prompt}\n\n<system-reminder>\nSubagentStart hook context:\n{context}\n</system-reminder>"
    )


PromptBuilder = Callable[[Sequence[Tool[Any]]], str]


def _default_prompt_builder(cwd: Path) -> PromptBuilder:
    from agent_cli.loop.system_prompt import build_system_prompt, gather_environment

    env_cache: list[Any] = []

    def build(tools: Sequence[Tool[Any]]) -> str:
        if not env_cache:
            env_cache.append(gather_environment(cwd))
        return build_system_prompt(
            env_cache[0], tool_descriptions=[(t.name, t.description) for t in tools]
        )

    return build


class LoopSubagentRunner:
    """Runs sub-agents as child ``AgentLoop``s (see the module docstring).

    ``parent_model`` and ``parent_transcript`` are callables because the session may switch its
    model (``/model``) or its transcript (``/clear``, ``/resume``) after the runner is built.
    """

    def __init__(
        self,
        *,
        model_client: ModelPort,
        parent_model: Callable[[], str],
        definitions: Sequence[AgentDefinition],
        parent_transcript: Callable[[], TranscriptWriter | None] = lambda: None,
        prompt_builder: PromptBuilder | None = None,
        cwd: Path | None = None,
        usage: SessionUsage | None = None,
        max_turns: int | None = DEFAULT_MAX_TURNS,
    ) -> None:
        self._model = model_client
        self._parent_model = parent_model
        self._definitions = tuple(definitions)
        self._parent_transcript = parent_transcript
        self._prompt_builder = prompt_builder or _default_prompt_builder(cwd or Path.cwd())
        self._usage = usage
        self._max_turns = max_turns
        self._prompts: dict[tuple[str, tuple[str, ...]], str] = {}

    def agent_types(self) -> Sequence[AgentDefinition]:
        return self._definitions

    # -- the port ----------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        description: str,
        subagent_type: str | None,
        model: str | None,
        ctx: ToolUseContext,
        progress: ProgressFn,
    ) -> SubagentResult:
        agent_id = uuid.uuid4().hex[:16]
        definition = find_agent(self._definitions, subagent_type or DEFAULT_SUBAGENT_TYPE)
        if definition is None:
            return SubagentResult(
                "", agent_id, is_error=True, error=f"unknown agent type {subagent_type!r}"
            )
        tools = child_tools(ctx.options.tools, definition)
        system_prompt = self._system_prompt(definition, tools)
        parent_writer = self._parent_transcript()
        transcript = parent_writer.sidechain(agent_id) if parent_writer is not None else None
        try:
            child_ctx = self._child_context(
                ctx, definition, agent_id, description, system_prompt, tools, transcript
            )
            loop = AgentLoop(
                model=self._model,
                model_name=self._model_name(model, definition, ctx),
                ctx=child_ctx,
                system_prompt=system_prompt,
                config=LoopConfig(max_turns=self._max_turns),
                links=SessionLinks(transcript=transcript, usage=self._usage),
            )
            if transcript is not None:
                transcript.meta(
                    "agent-name", agentName=description, agentType=definition.name, agentId=agent_id
                )
        except BaseException:
            if transcript is not None:
                transcript.close()  # the drive that would close it never starts
            raise
        prompt = await _subagent_start(ctx, prompt, agent_id, definition.name)
        drive = asyncio.ensure_future(
            self._drive(loop, prompt, description, agent_id, ctx, progress, transcript)
        )
        watcher = asyncio.ensure_future(self._abort_child_with_parent(ctx, loop, drive))
        try:
            return await asyncio.shield(drive)
        except asyncio.CancelledError:
            # The parent was interrupted: stop the child the orderly way, so its own
            # conversation answers every tool_use, then let the cancellation through.
            loop.abort("interrupted")
            await asyncio.wait((drive,), timeout=_ABORT_GRACE_SECONDS)
            if not drive.done():
                drive.cancel()
            raise
        finally:
            watcher.cancel()

    # -- internals ---------------------------------------------------------------------------

    def _system_prompt(self, definition: AgentDefinition, tools: Sequence[Tool[Any]]) -> str:
        # Frozen per agent type and tool set: re-rendering could drift and break the cache.
        key = (definition.name, tuple(t.name for t in tools))
        cached = self._prompts.get(key)
        if cached is None:
            base = self._prompt_builder(tools)
            role = definition.prompt.strip() or "Complete the task you are given."
            cached = f"{base}\n\n# Your role: sub-agent ({definition.name})\n{role}"
            self._prompts[key] = cached
        return cached

    def _model_name(
        self, requested: str | None, definition: AgentDefinition, ctx: ToolUseContext
    ) -> str:
        from agent_cli.model.names import subagent_model

        env = ctx.options.environ
        return subagent_model(requested, definition.model, self._parent_model(), env)

    def _child_context(
        self,
        parent: ToolUseContext,
        definition: AgentDefinition,
        agent_id: str,
        description: str,
        system_prompt: str,
        tools: Sequence[Tool[Any]],
        transcript: TranscriptWriter | None,
    ) -> ToolUseContext:
        ctx = _create_context(parent, agent_id=agent_id, system_prompt=system_prompt, tools=tools)
        ctx = dataclasses.replace(
            ctx,
            permissions=dataclasses.replace(
                ctx.permissions, mode=child_mode(parent.permissions.mode, definition)
            ),
        )
        ask_parent = parent.callbacks.request_permission
        label = f"sub-agent {definition.name}: {description}"

        async def request_permission(prompt: PermissionPrompt) -> PermissionResponse:
            # Bubble: the child has no terminal; the parent's prompt shows which agent asks.
            title = prompt.title or prompt.tool_name
            named = dataclasses.replace(
                prompt, title=f"{title}  ({label})", agent_id=prompt.agent_id or agent_id
            )
            return await ask_parent(named)

        callbacks = dataclasses.replace(ctx.callbacks, request_permission=request_permission)
        hooks = ctx.hooks
        if hooks is not None:
            path = transcript.path if transcript is not None else None
            hooks = _SubagentHooks(hooks, agent_id, definition.name, path)
        return dataclasses.replace(ctx, callbacks=callbacks, hooks=hooks)

    @staticmethod
    async def _abort_child_with_parent(
        parent: ToolUseContext, loop: AgentLoop, drive: asyncio.Future[Any]
    ) -> None:
        await parent.abort.wait()
        # The child loop makes its abort signal when its turn starts: until then, keep trying.
        while not drive.done():
            loop.abort(parent.abort.reason or "interrupted")
            await asyncio.sleep(0.02)

    async def _drive(
        self,
        loop: AgentLoop,
        prompt: str,
        description: str,
        agent_id: str,
        parent: ToolUseContext,
        progress: ProgressFn,
        transcript: TranscriptWriter | None,
    ) -> SubagentResult:
        started = time.perf_counter()
        tool_uses = 0
        recent: list[str] = []
        finished: TurnFinished | None = None
        errors: list[str] = []

        def report(step: str) -> None:
            recent.append(step)
            del recent[:-_RECENT_STEPS]
            try:
                progress(AgentProgress(agent_id, description, step, tuple(recent), tool_uses))
            except Exception:
                pass  # a UI failure must not fail the sub-agent

        events = loop.run_turn(prompt)
        try:
            async for event in events:
                if parent.abort.aborted:
                    loop.abort(parent.abort.reason or "interrupted")
                if isinstance(event, ToolStarted):
                    tool_uses += 1
                    report(event.header or event.name)
                elif isinstance(event, PermissionAsked):
                    report(f"waiting for permission: {event.tool_name}")
                elif isinstance(event, ErrorEvent):
                    errors.append(event.message)
                elif isinstance(event, TurnFinished):
                    finished = event
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()  # a cancelled drive still stops the child's producer
            if transcript is not None:
                transcript.close()
        duration = int((time.perf_counter() - started) * 1000)
        path = transcript.path if transcript is not None else None
        if finished is None:  # the loop always ends with TurnFinished; fail closed if not
            finished = TurnFinished(stop_reason="error", num_turns=0, is_error=True)
        error: str | None = None
        if finished.stop_reason == "aborted":
            error = "the sub-agent was interrupted"
        elif finished.is_error:
            error = "; ".join(errors) or f"the sub-agent stopped ({finished.stop_reason})"
        return SubagentResult(
            text=finished.result_text,
            agent_id=agent_id,
            messages=tuple(loop.messages),
            usage=dict(finished.usage),
            transcript_path=path,
            tool_uses=tool_uses,
            duration_ms=duration,
            stop_reason=finished.stop_reason,
            is_error=error is not None,
            error=error,
        )
