"""Custom slash commands and skills: Markdown prompts users invoke as ``/name args``.

* Commands: ``<dir>/commands/**/*.md`` for the user's config dirs and the project's ``.claude``
  / ``.nerve`` folders (``agent_cli.customize.locations``). A subfolder is a namespace:
  ``commands/frontend/component.md`` is ``/frontend:component``.
* Skills: ``<dir>/skills/<name>/SKILL.md`` in the same places. The folder may hold helper files
  and scripts (``${CLAUDE_SKILL_DIR}`` names it). A skill wins over a command of the same name,
  as in Claude Code.

Frontmatter (all optional): ``description`` (else the body's first line), ``argument-hint``,
``allowed-tools`` (rules allowed while the command's turn runs), ``model``,
``disable-model-invocation`` (the model may not run it through the Skill tool) and, for skills,
``name`` and ``user-invocable: false`` (offered to the model only). A file whose frontmatter is
broken is not offered; the warning names the file and line. Names are matched lower-cased, as
``/Name`` is typed.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import field
from pathlib import Path
from typing import Any

from agent_cli.customize.files import iter_markdown, read_user_file
from agent_cli.customize.frontmatter import (
    Frontmatter,
    FrontmatterError,
    as_text,
    as_words,
    parse_frontmatter,
)
from agent_cli.customize.locations import Folder, customization_folders
from tools.records import datarecord

__all__ = ["CommandSet", "PromptCommand", "load_prompt_commands"]

MAX_DESCRIPTION = 250
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.:-]*$")


@datarecord(frozen=True, slots=True)
class PromptCommand:
    """One custom command or skill, ready to expand (``agent_cli.customize.expand``)."""

    name: str
    description: str
    body: str
    path: Path
    level: str  # "user" | "project"
    kind: str = "command"  # "command" | "skill"
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    disable_model_invocation: bool = False
    user_invocable: bool = True
    skill_dir: Path | None = None
    # Whether ``allowed-tools`` may apply: a project's files only restrict until it is trusted.
    trusted: bool = True

    @property
    def source(self) -> str:
        """``project``, ``user``, ``project:frontend`` (the namespace), as /help shows it."""
        namespace = self.name.rpartition(":")[0] if self.kind == "command" else ""
        return f"{self.level}:{namespace}" if namespace else self.level

    @property
    def model_invocable(self) -> bool:
        return not self.disable_model_invocation


@datarecord
class CommandSet:
    """The session's commands and skills by name, and what went wrong loading them."""

    commands: dict[str, PromptCommand] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> PromptCommand | None:
        return self.commands.get(name.lower())

    def user_commands(self) -> list[PromptCommand]:
        """What ``/`` offers, sorted by name."""
        return sorted((c for c in self.commands.values() if c.user_invocable), key=_by_name)

    def model_commands(self) -> list[PromptCommand]:
        """What the Skill tool offers the model, sorted by name."""
        return sorted((c for c in self.commands.values() if c.model_invocable), key=_by_name)


def _by_name(command: PromptCommand) -> str:
    return command.name


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return value is True


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""


def _command(
    name: str, front: Frontmatter, path: Path, folder: Folder, kind: str, trusted: bool
) -> PromptCommand:
    description = as_text(front.get("description")) or _first_line(front.body)
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    invocable = front.get("user-invocable", "user_invocable")
    return PromptCommand(
        name=name,
        description=description,
        body=front.body,
        path=path,
        level=folder.level,
        kind=kind,
        argument_hint=as_text(front.get("argument-hint", "argument_hint")) or "",
        allowed_tools=as_words(front.get("allowed-tools", "allowed_tools")),
        model=as_text(front.get("model")),
        disable_model_invocation=_flag(
            front.get("disable-model-invocation", "disable_model_invocation")
        ),
        user_invocable=invocable is None or _flag(invocable),
        skill_dir=path.parent if kind == "skill" else None,
        trusted=trusted or folder.level == "user",
    )


def _parse(path: Path, what: str, warnings: list[str]) -> Frontmatter | None:
    try:
        text, truncated = read_user_file(path)
        front = parse_frontmatter(text, path)
    except FrontmatterError as exc:
        warnings.append(f"{what} not offered: {exc}")
        return None
    except OSError as exc:
        warnings.append(f"{what} not offered: {path}: {exc.strerror or exc}")
        return None
    if truncated:
        warnings.append(f"{what} {path} is over 256 KB; only its start is used")
    return front


def _valid(name: str, path: Path, what: str, warnings: list[str]) -> bool:
    if _NAME.match(name):
        return True
    warnings.append(f"{what} not offered: {path}: {name!r} is not a usable /name")
    return False


def _load_commands(
    folder: Folder, found: dict[str, PromptCommand], warnings: list[str], trusted: bool
) -> None:
    for path in iter_markdown(folder.path):
        rel = path.relative_to(folder.path).with_suffix("")
        name = ":".join(rel.parts).lower()
        if not _valid(name, path, "command", warnings):
            continue
        front = _parse(path, "command", warnings)
        if front is not None:
            found[name] = _command(name, front, path, folder, "command", trusted)


def _load_skills(
    folder: Folder, found: dict[str, PromptCommand], warnings: list[str], trusted: bool
) -> None:
    try:
        entries = sorted(p for p in folder.path.iterdir() if p.is_dir())
    except OSError:
        return
    for directory in entries:
        path = directory / "SKILL.md"
        if not path.exists() and not path.is_symlink():
            continue
        front = _parse(path, "skill", warnings)
        if front is None:
            continue
        name = (as_text(front.get("name")) or directory.name).lower()
        if _valid(name, path, "skill", warnings):
            found[name] = _command(name, front, path, folder, "skill", trusted)


def load_prompt_commands(
    cwd: Path,
    home: Path | None = None,
    *,
    project_trusted: bool = True,
    sources: Collection[str] | None = None,
) -> CommandSet:
    """Commands, then skills over them, each level over the one before (module docstring);
    ``sources`` (``--setting-sources``): only the user and/or project ones."""
    warnings: list[str] = []
    commands: dict[str, PromptCommand] = {}
    skills: dict[str, PromptCommand] = {}
    for folder in customization_folders("commands", cwd, home, sources=sources):
        _load_commands(folder, commands, warnings, project_trusted)
    for folder in customization_folders("skills", cwd, home, sources=sources):
        _load_skills(folder, skills, warnings, project_trusted)
    return CommandSet({**commands, **skills}, warnings)
