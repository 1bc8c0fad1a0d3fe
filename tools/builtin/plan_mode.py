"""EnterPlanMode and ExitPlanMode: the model switches into a read-only planning phase and asks
the user to approve its plan before it may change anything.

Both change the permission mode only through ``ToolResult.context_modifier`` (the context is
copied before each call; a modifier is the one way a tool changes what later tools see). Both are
serial (not concurrency-safe) so the new mode applies to the very next call.

ExitPlanMode is read-only (plan mode refuses everything else) and its own permission check asks,
so the pipeline shows the user the plan (the prompt's preview) in plan mode: approval runs the
tool, whose modifier restores the mode that was active before plan mode; a refusal leaves the
model in plan mode with the user's feedback. Without a UI (print mode) the ask is a denial.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import Decision, PermissionMode, ReasonKind, Verdict
from tools.base import build_tool
from tools.context import ToolUseContext
from tools.result import ToolResult, ValidationError

__all__ = [
    "ENTER_PLAN_MODE",
    "EXIT_PLAN_MODE",
    "TOOLS",
    "AllowedPrompt",
    "EnterPlanModeInput",
    "ExitPlanModeInput",
    "enter_plan_modifier",
    "exit_plan_modifier",
]

# EnterPlanMode remembers the mode to go back to in ``ctx.permissions.mode_before_plan``.

ENTERED_MESSAGE = """\
Entered plan mode. You should now focus on exploring the codebase and designing an \
implementation approach.

In plan mode, you should:
1. Thoroughly explore the codebase to understand existing patterns
2. Identify similar features and architectural approaches
3. Consider multiple approaches and their trade-offs
4. Design a concrete implementation strategy
5. When ready, use ExitPlanMode with your plan to ask the user to approve it

Remember: DO NOT write or edit any files yet. This is a read-only exploration and planning \
phase; tools that change anything are refused until the user approves the plan."""

ALREADY_MESSAGE = (
    "You are already in plan mode. Keep exploring read-only; call ExitPlanMode with your plan "
    "when it is ready."
)

APPROVED_MESSAGE = """\
User has approved your plan. You can now start coding. Start with updating your todo list if \
applicable.

## Approved Plan:
{plan}"""

_ENTER_DESCRIPTION = (
    "Switch to plan mode: read-only exploration and design before a non-trivial change. In plan "
    "mode, tools that change files or run non-read-only commands are refused. When the plan is "
    "ready, call ExitPlanMode with it so the user can approve it."
)
_EXIT_DESCRIPTION = (
    "Use in plan mode when your plan is ready: presents the plan (markdown) to the user for "
    "approval. On approval the previous permission mode is restored and you may implement the "
    "plan; if the user declines, stay in plan mode and revise the plan with their feedback. Only "
    "for planning implementation steps, not for research tasks."
)


class EnterPlanModeInput(BaseModel):
    """EnterPlanMode takes no parameters (``{}``); unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore")


class AllowedPrompt(BaseModel):
    """A category of action the plan will need (e.g. Bash "run tests"); informational here."""

    model_config = ConfigDict(extra="ignore")

    tool: str = Field(description='The tool the action uses, e.g. "Bash"')
    prompt: str = Field(description='A short description of the action, e.g. "run the tests"')


class ExitPlanModeInput(BaseModel):
    """``{plan}`` (the older, documented form) plus the current optional ``allowedPrompts``."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    plan: str | None = Field(
        None, description="The plan you came up with, in markdown; the user approves it"
    )
    allowed_prompts: list[AllowedPrompt] | None = Field(
        None,
        alias="allowedPrompts",
        description="Prompt-based permissions the plan needs (e.g. Bash: run tests)",
    )


def _previous_mode(ctx: ToolUseContext) -> PermissionMode:
    mode = ctx.permissions.mode_before_plan or PermissionMode.DEFAULT
    if mode is PermissionMode.PLAN:
        return PermissionMode.DEFAULT
    if mode is PermissionMode.BYPASS and not ctx.permissions.bypass_available:
        return PermissionMode.DEFAULT  # never into bypass unless it was enabled at launch
    return mode


def enter_plan_modifier(ctx: ToolUseContext) -> ToolUseContext:
    """Remember the current mode, then switch to plan (a no-op when already in plan mode).

    Pure, like every context modifier: the mode to return to lives in the new context.
    """
    perms = ctx.permissions
    if perms.mode is PermissionMode.PLAN:
        return ctx
    return replace(
        ctx, permissions=replace(perms, mode=PermissionMode.PLAN, mode_before_plan=perms.mode)
    )


def exit_plan_modifier(ctx: ToolUseContext) -> ToolUseContext:
    """Back to the mode that was active before plan mode (default when unknown)."""
    perms = ctx.permissions
    if perms.mode is not PermissionMode.PLAN:
        return ctx
    return replace(ctx, permissions=replace(perms, mode=_previous_mode(ctx), mode_before_plan=None))


def _in_subagent(ctx: ToolUseContext) -> bool:
    return ctx.agent.agent_id is not None


async def _validate_enter(_inp: EnterPlanModeInput, ctx: ToolUseContext) -> ValidationError | None:
    if _in_subagent(ctx):
        return ValidationError("EnterPlanMode cannot be used by a sub-agent", "agent_context")
    return None


async def _enter(_inp: EnterPlanModeInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    if ctx.permissions.mode is PermissionMode.PLAN:
        return ToolResult(ALREADY_MESSAGE)
    return ToolResult(ENTERED_MESSAGE, context_modifier=enter_plan_modifier)


async def _validate_exit(inp: ExitPlanModeInput, ctx: ToolUseContext) -> ValidationError | None:
    if _in_subagent(ctx):
        return ValidationError("ExitPlanMode cannot be used by a sub-agent", "agent_context")
    if ctx.permissions.mode is not PermissionMode.PLAN:
        return ValidationError(
            "You are not in plan mode. This tool is only for exiting plan mode after writing a "
            "plan. If your plan was already approved, continue with the implementation.",
            "not_in_plan_mode",
        )
    if not (inp.plan or "").strip():
        return ValidationError(
            "Provide the plan to approve: ExitPlanMode needs a non-empty `plan` (markdown).",
            "missing_plan",
        )
    return None


async def _exit_permission(_inp: ExitPlanModeInput, ctx: ToolUseContext) -> Verdict | None:
    if ctx.permissions.mode is not PermissionMode.PLAN:
        return None  # validation has refused it already
    # An ask of the tool's own: the user approves the plan (the prompt's preview), whatever rules
    # allow; plan mode lets it through because the tool is read-only.
    return Verdict(Decision.ASK, "Exit plan mode?", ReasonKind.TOOL)


async def _exit_preview(
    inp: ExitPlanModeInput, _ctx: ToolUseContext
) -> tuple[str | None, ExitPlanModeInput | None]:
    plan = (inp.plan or "").strip()
    lines = [plan]
    if inp.allowed_prompts:
        lines.append("")
        lines.append("Actions this plan needs:")
        lines += [f"- {p.tool}: {p.prompt}" for p in inp.allowed_prompts]
    return "\n".join(lines), None


async def _exit(inp: ExitPlanModeInput, _ctx: ToolUseContext, _progress: Any) -> ToolResult:
    # Reached only after the user approved (the tool's own check asks in plan mode).
    plan = (inp.plan or "").strip()
    return ToolResult(APPROVED_MESSAGE.format(plan=plan), context_modifier=exit_plan_modifier)


ENTER_PLAN_MODE = build_tool(
    name="EnterPlanMode",
    input_model=EnterPlanModeInput,
    call=_enter,
    description=_ENTER_DESCRIPTION,
    search_hint="plan mode read-only design before implementing",
    is_read_only=True,
    is_concurrency_safe=False,  # the new mode must apply to the very next call
    validate_input=_validate_enter,
    max_result_size_chars=10_000,
)

EXIT_PLAN_MODE = build_tool(
    name="ExitPlanMode",
    input_model=ExitPlanModeInput,
    call=_exit,
    description=_EXIT_DESCRIPTION,
    search_hint="present plan for approval leave plan mode",
    is_read_only=True,  # so plan mode lets it reach the user's prompt
    is_concurrency_safe=False,
    validate_input=_validate_exit,
    check_permissions=_exit_permission,
    prepare_prompt=_exit_preview,
    render_result=lambda _data: "Plan approved",
    max_result_size_chars=100_000,
)

TOOLS = (ENTER_PLAN_MODE, EXIT_PLAN_MODE)
