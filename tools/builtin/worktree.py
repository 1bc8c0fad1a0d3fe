"""EnterWorktree and ExitWorktree: work on an isolated branch in a git worktree, then return.

EnterWorktree creates ``.nerve/worktrees/<name>`` on branch ``worktree-<name>`` (or re-enters
that worktree) and moves the session there through its context modifier: ``ctx.cwd`` becomes
the worktree, so the permission boundary (the working directories) follows, and the Bash shell
starts there. ExitWorktree returns to where the session was, keeping the worktree or removing
it and its branch:

* ``keep`` changes nothing on disk, so it is read-only and runs without a prompt;
* ``remove`` asks the user, showing what will be deleted. A worktree with uncommitted files
  or commits found nowhere else is refused unless ``discard_changes`` is true, and then the
  prompt is a safety check that only a human may approve (never bypass mode, the auto-mode
  classifier, or a print-mode run): uncommitted work is never removed silently.

Both are serial, so the new directory applies to the very next call; both refuse to run in a
sub-agent (the worktree belongs to the session, not to a child's throw-away context). The
session's worktree lives in ``ctx.options.services.worktree`` (a modifier replaces the services
object, never mutates it).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import Decision, ReasonKind, SafetyCheck, Verdict
from tools.base import build_tool
from tools.builtin._git_worktree import (
    WorktreeError,
    WorktreeSession,
    create_or_reuse,
    new_name,
    remove_worktree,
    validate_name,
    worktree_changes,
)
from tools.context import ToolUseContext
from tools.errors import ToolExecutionError
from tools.result import ToolResult, ValidationError

__all__ = [
    "ENTER_WORKTREE",
    "EXIT_WORKTREE",
    "TOOLS",
    "EnterWorktreeInput",
    "ExitWorktreeInput",
    "WorktreeError",
    "WorktreeOutput",
    "WorktreeSession",
    "create_or_reuse",
    "current_worktree",
    "enter_modifier",
    "exit_modifier",
]

_ENTER_DESCRIPTION = """\
Create an isolated git worktree (a separate checkout on its own branch) and move this session \
into it, so you can make changes without touching the user's working tree. Use it only when \
the user asks for a worktree or for isolated work on a branch.

- name: optional; letters, digits, '.', '_' or '-' (a random name when omitted).
- The worktree is `.nerve/worktrees/<name>` on branch `worktree-<name>`, created from HEAD; \
an existing worktree of that name is re-entered.
- Afterwards every tool works inside the worktree. Use ExitWorktree to go back."""

_EXIT_DESCRIPTION = """\
Leave the worktree this session entered (EnterWorktree or `nerve --worktree`) and return to \
the original directory. Only when the user asks to leave the worktree or the work is finished.

- action "keep": leave the worktree and its branch on disk (to come back or merge later).
- action "remove": delete the worktree and its branch; the user is asked to confirm.
- discard_changes: only with "remove". If the worktree has uncommitted files or commits not on \
the original checkout, "remove" is refused and lists them; confirm with the user first, then \
call again with discard_changes: true.
Without an active worktree session it does nothing."""


class EnterWorktreeInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str | None = Field(
        None, description="Name for the worktree (a random one when omitted)", max_length=64
    )


class ExitWorktreeInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    action: Literal["keep", "remove"] = Field(
        description='"keep" leaves the worktree and branch on disk; "remove" deletes both'
    )
    discard_changes: bool = Field(
        False,
        description='With "remove": delete even uncommitted files and commits not merged back',
    )


class WorktreeOutput(BaseModel):
    action: Literal["enter", "keep", "remove"]
    path: str
    branch: str
    original_cwd: str
    created: bool = False
    message: str = ""


def current_worktree(ctx: ToolUseContext) -> WorktreeSession | None:
    return ctx.options.services.worktree


def enter_modifier(session: WorktreeSession) -> Any:
    """Move the session into ``session.path`` and remember where it came from."""

    def enter_worktree(ctx: ToolUseContext) -> ToolUseContext:
        services = replace(ctx.options.services, worktree=session)
        return replace(ctx.with_cwd(session.path), options=replace(ctx.options, services=services))

    return enter_worktree


def exit_modifier(ctx: ToolUseContext) -> ToolUseContext:
    """Back to the directory the session left; forget the worktree."""
    session = current_worktree(ctx)
    if session is None:
        return ctx
    services = replace(ctx.options.services, worktree=None)
    options = replace(ctx.options, services=services)
    return replace(ctx.with_cwd(session.original_cwd), options=options)


def _subagent_error(ctx: ToolUseContext, tool: str) -> ValidationError | None:
    if ctx.agent.agent_id is not None:
        return ValidationError(f"{tool} cannot be used by a sub-agent", "agent_context")
    return None


def _reset_shell_cwd(ctx: ToolUseContext) -> None:
    # The shell's remembered directory belongs to the old tree; the next command starts in
    # the new ``ctx.cwd`` without a "cwd was reset" notice.
    ctx.state.conversation.bash_cwd = None


# -- EnterWorktree -------------------------------------------------------------------------


async def _validate_enter(inp: EnterWorktreeInput, ctx: ToolUseContext) -> ValidationError | None:
    if (err := _subagent_error(ctx, "EnterWorktree")) is not None:
        return err
    if (active := current_worktree(ctx)) is not None:
        return ValidationError(
            f"Already in worktree {active.name!r} ({active.path}). Call ExitWorktree first.",
            "already_in_worktree",
        )
    if inp.name is not None and (problem := validate_name(inp.name)) is not None:
        return ValidationError(problem, "invalid_name")
    return None


async def _enter(inp: EnterWorktreeInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    try:
        session = await asyncio.to_thread(create_or_reuse, ctx.cwd, inp.name or new_name())
    except WorktreeError as exc:
        raise ToolExecutionError(f"Could not create the worktree: {exc}") from exc
    _reset_shell_cwd(ctx)
    verb = "Created" if session.created else "Entered the existing"
    message = (
        f"{verb} worktree at {session.path} on branch {session.branch}. The session now works "
        "in the worktree: files, commands and permissions refer to it. Call ExitWorktree when "
        "the user wants to leave it."
    )
    out = WorktreeOutput(
        action="enter",
        path=str(session.path),
        branch=session.branch,
        original_cwd=str(session.original_cwd),
        created=session.created,
        message=message,
    )
    return ToolResult(out, context_modifier=enter_modifier(session))


# -- ExitWorktree --------------------------------------------------------------------------


async def _validate_exit(inp: ExitWorktreeInput, ctx: ToolUseContext) -> ValidationError | None:
    if (err := _subagent_error(ctx, "ExitWorktree")) is not None:
        return err
    session = current_worktree(ctx)
    if session is None:
        return ValidationError(
            "No worktree session is active (EnterWorktree was not used in this session); "
            "nothing was changed.",
            "no_worktree",
        )
    if inp.action == "remove" and not inp.discard_changes:
        changes = await _changes(session)
        if not changes.clean:
            return ValidationError(
                f"The worktree {session.path} has work that removing it would destroy:\n"
                f"{changes.describe()}\nAsk the user: keep it (action: keep), or remove it with "
                "discard_changes: true once they confirm.",
                "uncommitted_changes",
            )
    return None


async def _changes(session: WorktreeSession) -> Any:
    try:
        return await asyncio.to_thread(worktree_changes, session)
    except WorktreeError as exc:
        raise ToolExecutionError(f"Could not inspect the worktree: {exc}") from exc


async def _exit_permission(inp: ExitWorktreeInput, ctx: ToolUseContext) -> Verdict | None:
    session = current_worktree(ctx)
    if inp.action == "keep" or session is None:
        return None
    changes = await _changes(session)
    if not changes.clean:
        check = SafetyCheck(
            f"removing worktree {session.name} discards uncommitted work",
            classifier_approvable=False,
        )
        return Verdict(Decision.ASK, check.message, ReasonKind.SAFETY, safety=check)
    return Verdict(
        Decision.ASK, f"removing worktree {session.name} deletes its branch", ReasonKind.TOOL
    )


async def _exit_preview(
    inp: ExitWorktreeInput, ctx: ToolUseContext
) -> tuple[str | None, ExitWorktreeInput | None]:
    session = current_worktree(ctx)
    if session is None or inp.action == "keep":
        return None, None
    changes = await _changes(session)
    lines = [f"Delete {session.path} and branch {session.branch}."]
    if not changes.clean:
        lines += ["", "This discards:", changes.describe()]
    return "\n".join(lines), None


async def _exit(inp: ExitWorktreeInput, ctx: ToolUseContext, _progress: Any) -> ToolResult:
    session = current_worktree(ctx)
    if session is None:
        raise ToolExecutionError("No worktree session is active; nothing was changed.")
    if inp.action == "remove":
        changes = await _changes(session)
        if not changes.clean and not inp.discard_changes:
            raise ToolExecutionError(
                f"The worktree gained changes before it could be removed; kept it:\n"
                f"{changes.describe()}"
            )
        try:
            await asyncio.to_thread(remove_worktree, session, force=not changes.clean)
        except WorktreeError as exc:
            raise ToolExecutionError(f"Could not remove the worktree: {exc}") from exc
        what = f"Removed worktree {session.path} and branch {session.branch}"
    else:
        what = f"Kept worktree {session.path} (branch {session.branch})"
    _reset_shell_cwd(ctx)
    out = WorktreeOutput(
        action=inp.action,
        path=str(session.path),
        branch=session.branch,
        original_cwd=str(session.original_cwd),
        message=f"{what}. The session is back in {session.original_cwd}.",
    )
    return ToolResult(out, context_modifier=exit_modifier)


def _to_content(data: Any) -> str:
    return data.message if isinstance(data, WorktreeOutput) else str(data)


def _render_result(data: Any) -> str:
    if not isinstance(data, WorktreeOutput):
        return str(data)
    if data.action == "enter":
        return f"In worktree {data.path} (branch {data.branch})"
    verb = "Kept" if data.action == "keep" else "Removed"
    return f"{verb} worktree (branch {data.branch}); back in {data.original_cwd}"


ENTER_WORKTREE = build_tool(
    name="EnterWorktree",
    input_model=EnterWorktreeInput,
    call=_enter,
    description=_ENTER_DESCRIPTION,
    search_hint="git worktree isolated branch checkout",
    is_concurrency_safe=False,  # the new directory must apply to the very next call
    validate_input=_validate_enter,
    to_content=_to_content,
    render_call=lambda inp: inp.name or "",
    render_result=_render_result,
    max_result_size_chars=10_000,
)

EXIT_WORKTREE = build_tool(
    name="ExitWorktree",
    input_model=ExitWorktreeInput,
    call=_exit,
    description=_EXIT_DESCRIPTION,
    search_hint="leave git worktree keep remove return",
    is_read_only=lambda inp: inp.action == "keep",
    is_concurrency_safe=False,
    is_destructive=lambda inp: inp.action == "remove",
    validate_input=_validate_exit,
    check_permissions=_exit_permission,
    prepare_prompt=_exit_preview,
    to_content=_to_content,
    render_call=lambda inp: inp.action,
    render_result=_render_result,
    max_result_size_chars=10_000,
)

TOOLS = (ENTER_WORKTREE, EXIT_WORKTREE)
