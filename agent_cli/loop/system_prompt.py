"""The system prompt: who Nerve is, the environment, how to use tools, and memory files.

Rendered once per session and then frozen (``AgentContext.system_prompt``): re-rendering it on
every request could drift (a clock, a git status) and break the prompt cache.
"""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
from collections.abc import Collection, Sequence
from pathlib import Path

from agent_cli.customize.memory import load_memory_files, render_memory
from config.safe_git import safe_git_argv
from tools.records import datarecord

__all__ = ["Environment", "build_system_prompt", "gather_environment"]

_INTRO = """\
You are Nerve, an interactive coding agent running in the user's terminal. You help with \
software engineering tasks: reading and changing code, running commands, explaining, debugging.

How to work:
- Use the tools to look before you act: read files before editing them, search with Grep and \
Glob rather than guessing paths.
- Prefer the dedicated tools (Read, Edit, Write, Glob, Grep) over Bash equivalents such as cat, \
sed, find and grep.
- Every tool call may be checked by the user's permission rules. If a call is denied, do not \
retry the same call; adjust your approach or ask the user.
- Run independent read-only tool calls in one response so they can run in parallel.
- Keep answers short and concrete. Use GitHub-flavoured Markdown. Refer to code as \
`path:line`.
- Never invent file contents, command output or test results."""


@datarecord(frozen=True, slots=True)
class Environment:
    cwd: Path
    platform: str
    date: str
    is_git: bool
    git_branch: str | None
    git_status: str | None
    additional_dirs: tuple[Path, ...] = ()


def _git(cwd: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            safe_git_argv(*args),  # the project's .git/config may name programs: pinned off
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=2,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _branch(header: str) -> str:
    """The branch of ``git status --branch``'s first line ("## main...origin/main [ahead 1]",
    "## No commits yet on main", "## HEAD (no branch)"); ref names hold no ".." nor spaces."""
    head = header[3:]
    for unborn in ("No commits yet on ", "Initial commit on "):
        if head.startswith(unborn):
            return head[len(unborn) :].strip()
    if head.startswith("HEAD (no branch)"):
        return "(detached HEAD)"
    return head.split("...", 1)[0].split(" ", 1)[0] or "(detached HEAD)"


def _git_probe(cwd: Path) -> tuple[bool, str | None, str | None]:
    """(is a work tree, branch, ``git status --short``) from one ``git status --short --branch``
    (one process, not three: each costs a spawn and ~5 ms of the start-up's wall time).
    If that call could not finish (no git, a timeout), the two cheap questions are asked
    separately, as before, and the status is left out."""
    try:
        out = subprocess.run(
            # runs at every start, before the user is asked anything: a core.fsmonitor (or
            # hook) in the project's .git/config must not run (config.safe_git)
            safe_git_argv("status", "--short", "--branch"),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=2,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        is_git = _git(cwd, "rev-parse", "--is-inside-work-tree") == "true"
        branch = (_git(cwd, "branch", "--show-current") or "(detached HEAD)") if is_git else None
        return is_git, branch, None
    lines = out.stdout.splitlines()
    if out.returncode != 0 or not lines or not lines[0].startswith("## "):
        return False, None, None  # not a work tree (outside a repository, inside .git, bare)
    return True, _branch(lines[0]), "\n".join(lines[1:]).strip()


def gather_environment(cwd: Path, additional_dirs: Sequence[Path] = ()) -> Environment:
    is_git, branch, raw = _git_probe(cwd)
    status = None
    if is_git:
        lines = (raw or "").splitlines()
        status = "\n".join(lines[:20]) + (
            f"\n... ({len(lines) - 20} more)" if len(lines) > 20 else ""
        )
    return Environment(
        cwd=cwd,
        platform=f"{platform.system().lower()} {platform.release()}",
        date=_dt.date.today().isoformat(),
        is_git=is_git,
        git_branch=branch,
        git_status=status if status else ("(clean)" if branch is not None else None),
        additional_dirs=tuple(additional_dirs),
    )


def _render_env(env: Environment) -> str:
    lines = [
        "<env>",
        f"Working directory: {env.cwd}",
        f"Is directory a git repo: {'yes' if env.is_git else 'no'}",
    ]
    if env.additional_dirs:
        lines.append("Additional working directories: " + ", ".join(map(str, env.additional_dirs)))
    lines += [f"Platform: {env.platform}", f"Today's date: {env.date}", "</env>"]
    if env.is_git:
        lines += [f"Current git branch: {env.git_branch}", f"Git status:\n{env.git_status}"]
    return "\n".join(lines)


def build_system_prompt(
    env: Environment,
    *,
    tool_descriptions: Sequence[tuple[str, str]] = (),
    home: Path | None = None,
    include_memory: bool = True,
    warnings: list[str] | None = None,
    replace: str | None = None,
    append: str | None = None,
    sources: Collection[str] | None = None,
) -> str:
    """The whole system prompt. Tool descriptions are listed by name (schemas go in ``tools``).

    Why a memory or rules file was skipped goes to ``warnings`` when given. ``replace``
    (``--system-prompt``) stands for the intro, environment and tool listing; memory files
    still follow it, as CLAUDE.md does under Claude Code's flag. ``append``
    (``--append-system-prompt``) comes last. ``sources`` (``--setting-sources``): which memory
    files load (``agent_cli.customize.memory``)."""
    parts = [replace] if replace else [_INTRO, _render_env(env)]
    if tool_descriptions and not replace:
        listing = "\n".join(
            f"- {name}: {desc.splitlines()[0] if desc else ''}" for name, desc in tool_descriptions
        )
        parts.append("Tools available in this session:\n" + listing)
    if include_memory:
        files = load_memory_files(env.cwd, home=home, warnings=warnings, sources=sources)
        memory = render_memory(files)
        if memory:
            parts.append(memory)
    if append:
        parts.append(append)
    return "\n\n".join(parts)
