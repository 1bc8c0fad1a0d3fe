"""Agent: start a sub-agent with its own conversation for a self-contained task.

The tool layer cannot run a model loop (``tools`` never imports ``agent_cli``), so the tool
declares a port, :class:`SubagentRunner`, and finds its implementation in
``ctx.options.services.subagent_runner`` (``agent_cli.agents.runner`` provides it). The runner gives
the child a context made by ``create_subagent_context`` (its permission asks bubble up to the
parent's prompt, its abort signal is a child of the parent's), records the child's conversation
in a sidechain transcript, and returns its final text.

The result is the child's final text with a short footer; the child's conversation is not
injected into the parent's (it lives in its sidechain file), so the parent's context stays small.

Permissions: the Agent call itself is generic (``Agent(Explore)`` rules match ``subagent_type``);
its own check allows it, since every tool the child calls is checked on its own — a deny or ask
rule on Agent still wins (the engine applies them before the tool's own verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import Decision, ReasonKind, Verdict
from tools.base import ProgressFn, build_tool
from tools.context import ToolUseContext
from tools.messages import Message
from tools.records import datarecord
from tools.result import ToolResult, ValidationError

__all__ = [
    "AGENT",
    "DEFAULT_SUBAGENT_TYPE",
    "TOOLS",
    "AgentDefinition",
    "AgentInput",
    "AgentOutput",
    "AgentProgress",
    "SubagentResult",
    "SubagentRunner",
    "render_agent_progress",
]

DEFAULT_SUBAGENT_TYPE = "general-purpose"

_DESCRIPTION = """\
Launch a sub-agent to handle a complex, multi-step task on its own. The sub-agent has its own \
conversation and the same tools as you (except Agent and the plan-mode tools); it cannot see \
your conversation, so the prompt must contain everything it needs. It returns one final message.

When to use: open-ended searches across a codebase, research that would flood your context, \
independent sub-tasks. When not to: reading one known file (use Read), searching for a specific \
symbol (use Grep/Glob).

- description: 3-5 words saying what the sub-agent will do.
- prompt: a detailed, self-contained task; say what to return.
- subagent_type: "general-purpose" (default), "Explore" (read-only exploration), or a custom \
agent defined in .claude/agents/ or .nerve/agents/.
- The result is not shown to the user: summarise what matters.
Several Agent calls in one response run one after another."""


class AgentInput(BaseModel):
    """The Agent tool's input (Claude Code's ``Agent`` / legacy ``Task``)."""

    model_config = ConfigDict(extra="ignore")

    description: str = Field(
        min_length=1, max_length=200, description="A short (3-5 word) description of the task"
    )
    prompt: str = Field(min_length=1, description="The task for the agent to perform")
    subagent_type: str | None = Field(
        None, description='The type of agent to use ("general-purpose" when omitted)'
    )
    model: str | None = Field(
        None, description='Optional model for this agent ("sonnet", "opus", "haiku" or a name)'
    )


@datarecord(frozen=True, slots=True)
class AgentDefinition:
    """A sub-agent type: built-in or loaded from ``.claude/agents/*.md`` / ``.nerve/agents``.

    ``tools`` None means every tool the parent has (minus Agent and the plan tools); ``model``
    None or "inherit" means the parent's model. ``prompt`` is the agent's system prompt body.
    ``permission_mode`` (e.g. "plan" for a read-only agent) may make the child stricter than
    its parent, never looser than a parent in plan mode.
    """

    name: str
    description: str
    prompt: str = ""
    tools: tuple[str, ...] | None = None
    model: str | None = None
    permission_mode: str | None = None
    source: str = "built-in"
    path: Path | None = None


@datarecord(frozen=True, slots=True)
class SubagentResult:
    """What a finished sub-agent hands back to the Agent tool."""

    text: str
    agent_id: str
    messages: tuple[Message, ...] = ()
    usage: dict[str, int] = field(default_factory=dict)
    transcript_path: Path | None = None
    tool_uses: int = 0
    duration_ms: int = 0
    stop_reason: str = "end_turn"
    is_error: bool = False
    error: str | None = None


@datarecord(frozen=True, slots=True)
class AgentProgress:
    """The sub-agent's live view: its current step and the last few before it."""

    agent_id: str
    description: str
    step: str
    recent: tuple[str, ...] = ()
    tool_uses: int = 0
    tool: str = "Agent"

    @property
    def text(self) -> str:
        """The rendered view (what a UI without the Agent renderer shows)."""
        return render_agent_progress(self)


@runtime_checkable
class SubagentRunner(Protocol):
    """The port the Agent tool calls (implemented in ``agent_cli.agents.runner``)."""

    def agent_types(self) -> Sequence[AgentDefinition]:
        """The sub-agent types this session offers."""
        ...

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
        """Run a child conversation to its end (abort: ``ctx.abort``); never raises for a
        failure of the child's own (that is ``is_error``)."""
        ...


class AgentOutput(BaseModel):
    """The structured result (recorded as ``toolUseResult`` in the parent's transcript)."""

    text: str
    agent_id: str
    subagent_type: str
    tool_uses: int = 0
    total_tokens: int = 0
    duration_ms: int = 0
    stop_reason: str = "end_turn"
    transcript_path: str | None = None


def _runner(ctx: ToolUseContext) -> SubagentRunner | None:
    return ctx.options.services.subagent_runner


def _backfill(inp: AgentInput, _ctx: ToolUseContext) -> AgentInput:
    # ``Agent(general-purpose)`` rules match a call that left the type to its default.
    if inp.subagent_type:
        return inp
    return inp.model_copy(update={"subagent_type": DEFAULT_SUBAGENT_TYPE})


async def _validate(inp: AgentInput, ctx: ToolUseContext) -> ValidationError | None:
    if not inp.prompt.strip():
        return ValidationError("The prompt is empty: give the sub-agent a self-contained task")
    if ctx.agent.agent_id is not None:
        return ValidationError("A sub-agent cannot start another sub-agent", "nested_agent")
    runner = _runner(ctx)
    if runner is None:
        return ValidationError("Sub-agents are not available in this session", "no_runner")
    wanted = inp.subagent_type or DEFAULT_SUBAGENT_TYPE
    names = [d.name for d in runner.agent_types()]
    if wanted not in names and wanted.lower() not in {n.lower() for n in names}:
        return ValidationError(
            f"Agent type {wanted!r} not found. Available agents: {', '.join(names)}",
            "unknown_agent_type",
        )
    return None


async def _check_permissions(_inp: AgentInput, _ctx: ToolUseContext) -> Verdict | None:
    return Verdict(
        Decision.ALLOW,
        "starting a sub-agent; its tools are checked on their own",
        ReasonKind.TOOL,
    )


async def _call(inp: AgentInput, ctx: ToolUseContext, progress: ProgressFn) -> ToolResult:
    runner = _runner(ctx)
    if runner is None:  # validated already; a context changed in between fails closed
        return ToolResult("Sub-agents are not available in this session", is_error=True)
    agent_type = inp.subagent_type or DEFAULT_SUBAGENT_TYPE
    result = await runner.run(
        inp.prompt,
        description=inp.description,
        subagent_type=agent_type,
        model=inp.model,
        ctx=ctx,
        progress=progress,
    )
    if result.is_error:
        detail = result.error or "the sub-agent failed"
        partial = f"\n\nIts last message:\n{result.text}" if result.text.strip() else ""
        return ToolResult(f"Sub-agent failed: {detail}{partial}", is_error=True)
    usage = result.usage
    total = sum(usage.get(k, 0) for k in ("input_tokens", "output_tokens")) + sum(
        usage.get(k, 0) for k in ("cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return ToolResult(
        AgentOutput(
            text=result.text,
            agent_id=result.agent_id,
            subagent_type=agent_type,
            tool_uses=result.tool_uses,
            total_tokens=total,
            duration_ms=result.duration_ms,
            stop_reason=result.stop_reason,
            transcript_path=str(result.transcript_path) if result.transcript_path else None,
        )
    )


def _to_content(data: Any) -> str:
    if not isinstance(data, AgentOutput):
        return str(data)
    text = data.text.strip() or "(the sub-agent returned no text)"
    note = ""
    if data.stop_reason == "max_turns":
        note = " · stopped at its turn limit"
    uses = f"{data.tool_uses} tool use{'s' if data.tool_uses != 1 else ''}"
    seconds = data.duration_ms / 1000
    return f"{text}\n\n[agent {data.agent_id}: {uses} · {data.total_tokens} tokens · {seconds:.1f}s{note}]"


def render_agent_progress(progress: Any) -> str:
    """The whole current view: the last few steps, the newest last."""
    if isinstance(progress, AgentProgress):
        recent, uses = progress.recent or (progress.step,), progress.tool_uses
    elif isinstance(progress, dict):
        recent = tuple(progress.get("recent") or (progress.get("step", ""),))
        uses = int(progress.get("tool_uses", 0) or 0)
    else:
        return str(progress)
    lines = [f"  ⎿ {step}" for step in recent if step]
    lines.append(f"  {uses} tool use{'s' if uses != 1 else ''}")
    return "\n".join(lines)


def _render_call(inp: AgentInput) -> str:
    return inp.description


def _render_result(data: Any) -> str:
    if isinstance(data, AgentOutput):
        return f"Done ({data.tool_uses} tool uses · {data.total_tokens} tokens)"
    return str(data)[:200]


AGENT = build_tool(
    name="Agent",
    aliases=("Task",),
    input_model=AgentInput,
    call=_call,
    description=_DESCRIPTION,
    search_hint="sub-agent delegate task explore research in parallel",
    is_read_only=False,
    is_concurrency_safe=False,
    validate_input=_validate,
    check_permissions=_check_permissions,
    backfill_input=_backfill,
    to_content=_to_content,
    render_call=_render_call,
    render_progress=render_agent_progress,
    render_result=_render_result,
    max_result_size_chars=100_000,
)

TOOLS = (AGENT,)
