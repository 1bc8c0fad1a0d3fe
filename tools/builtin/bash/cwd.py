"""The Bash shell's working directory: where the next command starts, and where it ended.

The directory persists in ``ctx.state.conversation.bash_cwd`` while it stays inside the working
dirs (``ctx.permissions.working_dirs``); leaving them (or the directory disappearing) resets
it to ``ctx.cwd`` with the notice "Shell cwd was reset to <dir>". The final directory of a
command is reported by the script's trailer through a private pipe (:func:`cwd_channel`).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from tools.context import ToolUseContext

__all__ = ["current_cwd", "cwd_channel", "read_cwd", "settle_cwd"]

_CWD_FD_MIN = 200


def _inside(path: Path, dirs: tuple[Path, ...]) -> bool:
    real = path.resolve()
    return any(real.is_relative_to(d.resolve()) for d in dirs)


def current_cwd(ctx: ToolUseContext) -> tuple[Path, list[str]]:
    """The shell's working directory for the next command, and any reset notice."""
    path = ctx.state.conversation.bash_cwd
    if path is None:
        return ctx.cwd, []
    if path.is_dir() and _inside(path, ctx.permissions.working_dirs):
        return path, []
    ctx.state.conversation.bash_cwd = ctx.cwd
    return ctx.cwd, [f"Shell cwd was reset to {ctx.cwd}"]


def settle_cwd(ctx: ToolUseContext, final: Path | None, notices: list[str]) -> Path:
    """Record where a command ended (None: unknown, keep the old one); a reset adds a notice."""
    if final is None or not final.is_dir():
        return current_cwd(ctx)[0]
    if _inside(final, ctx.permissions.working_dirs):
        ctx.state.conversation.bash_cwd = final
        return final
    ctx.state.conversation.bash_cwd = ctx.cwd
    notices.append(f"Shell cwd was reset to {ctx.cwd}")
    return ctx.cwd


def cwd_channel() -> tuple[int, int]:
    """A pipe for the trailer's ``pwd``: (read end, non-blocking; write end at fd >= 200).

    A high fd number keeps clear of the fds scripts use themselves (``exec 3>file``); a pipe
    instead of a temp file keeps the per-call cost to two syscalls.
    """
    r, w = os.pipe()
    try:
        high = fcntl.fcntl(w, fcntl.F_DUPFD_CLOEXEC, _CWD_FD_MIN)
    finally:
        os.close(w)
    os.set_blocking(r, False)
    return r, high


def read_cwd(r: int) -> Path | None:
    try:
        data = os.read(r, 65536)
    except (BlockingIOError, OSError):
        return None  # the trailer did not run (``exit``, ``exec``, killed)
    text = data.decode("utf-8", errors="surrogateescape").strip("\n")
    return Path(text) if text.startswith("/") and "\n" not in text else None
