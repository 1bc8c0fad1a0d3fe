"""Sub-agent types: the built-in ones and custom agents from Markdown files.

Custom agents live in ``.claude/agents/*.md`` or ``.nerve/agents/*.md`` (project, found from the
working directory) and the same folders under the home directory (user). Each file is YAML-ish
frontmatter followed by the agent's system prompt:

    ---
    name: code-reviewer
    description: Reviews a diff for bugs
    tools: Read, Grep, Glob
    model: haiku
    permissionMode: plan
    ---
    You are a careful code reviewer...

Project agents override user agents of the same name; both override the built-ins. A file that
cannot be read or has no name/description is skipped with a warning, never an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

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

_AGENT_DIRS = (".claude/agents", ".nerve/agents")


def _split_list(value: str) -> tuple[str, ...]:
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    return tuple(p.strip().strip("'\"") for p in value.split(",") if p.strip().strip("'\""))


def _frontmatter(text: str) -> tuple[dict[str, str | tuple[str, ...]], str] | None:
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return None
    fields: dict[str, str | tuple[str, ...]] = {}
    key: str | None = None
    for raw in lines[1:end]:
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") and key is not None:  # a YAML block list item
            prev = fields.get(key)
            items = prev if isinstance(prev, tuple) else ()
            fields[key] = (*items, stripped[2:].strip().strip("'\""))
            continue
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        key = key.strip().lower()
        value = value.strip()
        fields[key] = value.strip("'\"") if value else ()
    body = "\n".join(lines[end + 1 :]).strip()
    return fields, body


def parse_agent_file(path: Path, source: str) -> tuple[AgentDefinition | None, str | None]:
    """One agent file -> (definition, None) or (None, why it was skipped)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return None, f"skipped agent file {path}: {exc.strerror or exc}"
    parsed = _frontmatter(text)
    if parsed is None:
        return None, f"skipped agent file {path}: no frontmatter (--- name/description ---)"
    fields, body = parsed
    name = fields.get("name")
    description = fields.get("description")
    if not isinstance(name, str) or not name.strip():
        return None, f"skipped agent file {path}: no name"
    if not isinstance(description, str) or not description.strip():
        return None, f"skipped agent file {path}: no description"
    raw_tools = fields.get("tools")
    tools: tuple[str, ...] | None
    if raw_tools is None or raw_tools == () or raw_tools == "*":
        tools = None
    elif isinstance(raw_tools, tuple):
        tools = raw_tools
    else:
        tools = _split_list(raw_tools)
    model = fields.get("model")
    mode = fields.get("permissionmode")
    return (
        AgentDefinition(
            name=name.strip(),
            description=description.strip(),
            prompt=body,
            tools=tools,
            model=model.strip() if isinstance(model, str) and model.strip() else None,
            permission_mode=mode.strip() if isinstance(mode, str) and mode.strip() else None,
            source=source,
            path=path,
        ),
        None,
    )


def _agent_files(base: Path) -> Iterable[Path]:
    for rel in _AGENT_DIRS:
        folder = base / rel
        try:
            yield from sorted(p for p in folder.glob("*.md") if p.is_file())
        except OSError:
            continue


# Modes a project's agent file may ask for before its folder is trusted: only restrictions.
_UNTRUSTED_MODES = frozenset({"plan", "dontAsk"})


def load_agent_definitions(
    cwd: Path, home: Path | None = None, *, project_trusted: bool = True
) -> tuple[list[AgentDefinition], list[str]]:
    """Built-ins, then user agents, then project agents (later ones win by name).

    A project agent of an untrusted folder may not loosen permissions: a ``permissionMode``
    other than ``plan`` or ``dontAsk`` is dropped with a warning (workspace trust).
    """
    home = home if home is not None else Path.home()
    by_name: dict[str, AgentDefinition] = {a.name: a for a in BUILTIN_AGENTS}
    warnings: list[str] = []
    bases = [(home, "userSettings")]
    if cwd.resolve() != home.resolve():
        bases.append((cwd, "projectSettings"))
    for base, source in bases:
        for path in _agent_files(base):
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
