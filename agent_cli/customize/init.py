"""``/init``: the model writes a starter memory file for the repository.

The target is ``AGENTS.md`` at the project root, or ``CLAUDE.md`` when the project has one and
no ``AGENTS.md``. ``/init`` is a prompt for the model, which studies the repository with its
tools and writes the file with Write (or improves it with Edit); the session adds an ask rule
on the target for the turn, so the user sees the diff and approves it even in acceptEdits or
bypass mode.
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.customize.commands import PromptCommand
from config import find_project_root

__all__ = ["INIT_DESCRIPTION", "init_command", "init_target"]

INIT_DESCRIPTION = "write a starter AGENTS.md (or improve CLAUDE.md) for this repository"

_PROMPT = """\
Please study this repository and {action} {target}: the standing instructions future coding \
sessions in this repository will read first.

Look before you write: the README, build and package files (pyproject.toml, package.json, \
Makefile, Cargo.toml, ...), CI configuration, the layout of the source and test folders, and \
any existing instructions (CLAUDE.md, AGENTS.md, .cursor/rules, .cursorrules, \
.github/copilot-instructions.md) worth keeping.

Then write, concisely:
1. The commands to build, lint and test, and how to run a single test.
2. The architecture in brief: the big pieces and how they fit, what a newcomer would otherwise \
learn only by reading many files.
3. Conventions that are specific to this codebase and not obvious (naming, error handling, \
where tests go, what must never be done).

Do not list every file, do not repeat what any competent developer knows, and do not invent \
commands or facts you have not seen in the repository. {how} The user will review the diff \
before it is written."""


def init_target(cwd: Path) -> Path:
    """``AGENTS.md`` at the project root, or its ``CLAUDE.md`` when only that exists."""
    root = find_project_root(cwd)
    agents, claude = root / "AGENTS.md", root / "CLAUDE.md"
    return claude if claude.exists() and not agents.exists() else agents


def init_command(cwd: Path) -> PromptCommand:
    """``/init`` as a prompt command for ``cwd``."""
    target = init_target(cwd)
    exists = target.exists()
    body = _PROMPT.format(
        action="improve the existing" if exists else "create",
        target=target,
        how=(
            "Edit the file in place: keep what is right, fix what is wrong or stale."
            if exists
            else "Create the file with the Write tool."
        ),
    )
    return PromptCommand(
        name="init",
        description=INIT_DESCRIPTION,
        body=body,
        path=target,
        level="builtin",
        kind="builtin",
    )
