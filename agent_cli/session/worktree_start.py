"""``nerve --worktree NAME``: start the session inside a git worktree of the current repository.

The worktree (``.nerve/worktrees/<NAME>`` on branch ``worktree-<NAME>``, created from HEAD or
re-entered) becomes the session's directory: settings, permissions, the transcript and the
system prompt are those of a ``nerve`` started there. The session remembers the directory it
came from, so ExitWorktree can return there, keeping or removing the worktree.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.session.resume import SessionError
from tools.builtin.worktree import WorktreeError, WorktreeSession, create_or_reuse

if TYPE_CHECKING:
    from agent_cli.session.agent_session import AgentSession

__all__ = ["attach_worktree", "start_worktree"]


def start_worktree(cwd: Path, name: str) -> WorktreeSession:
    """Create or re-enter the worktree; a problem is a SessionError for the user."""
    try:
        return create_or_reuse(cwd, name)
    except WorktreeError as exc:
        raise SessionError(f"--worktree {name}: {exc}") from exc


def attach_worktree(session: AgentSession, worktree: WorktreeSession | None) -> None:
    """Let the session's tools know it runs in ``worktree`` (ExitWorktree returns from it)."""
    if worktree is None:
        return
    session.ctx.options.services.worktree = worktree
    verb = "Created" if worktree.created else "Entered"
    session.warnings.append(
        f"{verb} worktree {worktree.path} (branch {worktree.branch}); "
        "the session works there until ExitWorktree."
    )
