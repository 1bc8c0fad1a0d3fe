"""Sub-agent types: the built-in ones and custom agents from Markdown files.

Custom agents live in ``.claude/agents/*.md`` or ``.nerve/agents/*.md`` of the project (every
directory from the project root down to the working directory) and of the user's config dirs.
Each file is YAML frontmatter (``agent_cli.customize.frontmatter``: block scalars ``|`` and ``>``
work) followed by the agent's system prompt:

    ---
    name: code-reviewer
    description: Reviews a diff for bugs
    tools: Read, Grep, Glob
    model: haiku
    permissionMode: plan
    ---
    You are a careful code reviewer...

Project agents override user agents of the same name; both override the built-ins. A file that
cannot be read (a FIFO or a device is refused unopened), has broken frontmatter or no
name/description is skipped with a warning naming it, never an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from pathlib import Path

from agent_cli.customize.files import iter_markdown, read_user_file
from agent_cli.customize.frontmatter import FrontmatterError, as_text, as_words, parse_frontmatter
from agent_cli.customize.locations import customization_folders
from tools.builtin.agent import DEFAULT_SUBAGENT_TYPE, AgentDefinition

__all__ = ["BUILTIN_AGENTS", "find_agent", "load_agent_definitions", "parse_agent_file"]

_GENERAL_PROMPT = """\
You are a sub-agent of Nerve, started by the main agent for one task. Given the task below, use \
the tools available to complete it fully — don't gold-plate, but don't leave it half-done. You \
cannot ask the user questions: when something is ambiguous, choose the most reasonable reading \
and say so. When you are done, answer with a concise report of what you found or did (with \
`path:line` references); it goes to the main agent, not to the user."""

_EXPLORE_PROMPT = """\
You are a read-only exploration sub-agent of Nerve. Find and read what the task asks about, \
quickly and thoroughly: search with Glob and Grep, read with Read, and use Bash only for \
read-only commands (ls, git log, git diff...). Never create, edit or delete files. Answer with \
a concise report (with `path:line` references) for the main agent."""

BUILTIN_AGENTS: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        name=DEFAULT_SUBAGENT_TYPE,
        description="General-purpose agent for researching complex questions, searching for "
        "code and executing multi-step tasks",
        prompt=_GENERAL_PROMPT,
    ),
    AgentDefinition(
        name="Explore",
        description="Fast read-only agent for exploring codebases: finding files, searching "
        "code, answering questions about it",
        prompt=_EXPLORE_PROMPT,
        tools=("Read", "Glob", "Grep", "Bash"),
        permission_mode="plan",  # plan mode refuses anything that is not read-only
    ),
)


def parse_agent_file(path: Path, source: str) -> tuple[AgentDefinition | None, str | None]:
    """One agent file -> (definition, None) or (None, why it was skipped)."""
    try:
        text, _ = read_user_file(path)
    except OSError as exc:
        return None, f"skipped agent file {path}: {exc.strerror or exc}"
    try:
        front = parse_frontmatter(text, path)
    except FrontmatterError as exc:
        return None, f"skipped agent file {exc}"
    if not front.has_frontmatter:
        return None, f"skipped agent file {path}: no frontmatter (--- name/description ---)"
    name = as_text(front.get("name"))
    description = as_text(front.get("description"))
    if not name:
        return None, f"skipped agent file {path}: no name"
    if not description:
        return None, f"skipped agent file {path}: no description"
    raw_tools = front.get("tools")
    tools: tuple[str, ...] | None = as_words(raw_tools)
    if not tools or tools == ("*",):
        tools = None
    model = as_text(front.get("model"))
    mode = as_text(front.get("permissionmode", "permission-mode"))
    return (
        AgentDefinition(
            name=name,
            description=" ".join(description.split()),
            prompt=front.body,
            tools=tools,
            model=model,
            permission_mode=mode,
            source=source,
            path=path,
        ),
        None,
    )


# Modes a project's agent file may ask for before its folder is trusted: only restrictions.
_UNTRUSTED_MODES = frozenset({"plan", "dontAsk"})


def load_agent_definitions(
    cwd: Path,
    home: Path | None = None,
    *,
    project_trusted: bool = True,
    sources: Collection[str] | None = None,
) -> tuple[list[AgentDefinition], list[str]]:
    """Built-ins, then user agents, then project agents from the project root down to ``cwd``
    (later ones win by name; see ``agent_cli.customize.locations``); ``sources``
    (``--setting-sources``): only the user and/or project ones.

    A project agent of an untrusted folder may not loosen permissions: a ``permissionMode``
    other than ``plan`` or ``dontAsk`` is dropped with a warning (workspace trust).
    """
    by_name: dict[str, AgentDefinition] = {a.name: a for a in BUILTIN_AGENTS}
    warnings: list[str] = []
    for folder in customization_folders("agents", cwd, home, sources=sources):
        source = "userSettings" if folder.level == "user" else "projectSettings"
        for path in iter_markdown(folder.path, recursive=False):
            definition, warning = parse_agent_file(path, source)
            if warning:
                warnings.append(warning)
            if (
                definition is not None
                and source == "projectSettings"
                and not project_trusted
                and definition.permission_mode not in (None, *_UNTRUSTED_MODES)
            ):
                warnings.append(
                    f"agent {definition.name!r} ({path}): permissionMode "
                    f"{definition.permission_mode} not applied until you trust this folder"
                )
                definition = dataclasses.replace(definition, permission_mode=None)
            if definition is not None:
                by_name[definition.name] = definition
    return list(by_name.values()), warnings


def find_agent(definitions: Iterable[AgentDefinition], name: str) -> AgentDefinition | None:
    """By exact name, then case-insensitively (``explore`` finds ``Explore``)."""
    defs = list(definitions)
    for d in defs:
        if d.name == name:
            return d
    lowered = name.lower()
    return next((d for d in defs if d.name.lower() == lowered), None)
