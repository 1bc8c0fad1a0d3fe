"""Expanding a command or skill body into the prompt the model gets.

In this order:

1. ``!`cmd` `` spans are found in the body as written, so text a user passes as arguments can
   never become a command;
2. variables: ``$ARGUMENTS`` (the arguments as typed), ``$ARGUMENTS[N]`` (0-based), ``$1``…``$9``
   (1-based, as most command files in the wild are written, unless the body also uses ``$0`` or
   ``$ARGUMENTS[N]``, Claude Code's newer 0-based form), ``${CLAUDE_SKILL_DIR}``,
   ``${CLAUDE_PROJECT_DIR}``, ``${CLAUDE_SESSION_ID}``. Arguments are split shell-style; a
   missing positional stays as written (as Claude Code does). Arguments given to a body with no
   placeholder are appended as ``ARGUMENTS: …``;
3. each ``!`cmd` `` runs as a Bash call through the whole tool pipeline (rules, hooks, the
   permission prompt; in print mode an ask is a denial) and is replaced by its output. A
   command that is not allowed stops the expansion: nothing is sent;
4. each ``@path`` naming an existing file is read through the Read tool (its permission check
   and hooks) and appended; one that may not be read is left out, with a note.
"""

from __future__ import annotations

import re
import shlex
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from agent_cli.customize.commands import PromptCommand
from agent_cli.customize.mention_refs import find_mentions, resolve_ref
from permissions.types import Decision
from tools.pipeline.types import CallOutcome
from tools.records import datarecord

__all__ = [
    "Expansion",
    "ToolRunner",
    "command_header",
    "content_text",
    "expand_command",
    "new_call_id",
    "substitute",
]

ToolRunner = Callable[[str, dict[str, Any]], Awaitable[CallOutcome]]

_BANG = re.compile(r"!`([^`\n]+)`")
_VARIABLE = re.compile(r"\$\{(CLAUDE_SKILL_DIR|CLAUDE_PROJECT_DIR|CLAUDE_SESSION_ID)\}")
_ARGS = re.compile(r"\$ARGUMENTS(?:\[(\d+)\])?|\$(\d)(?!\d)")
_ZERO_BASED = re.compile(r"\$0(?!\d)|\$ARGUMENTS\[\d+\]")
_NO_OUTPUT = re.compile(r"^\(\w+ completed with no output\)$")


@datarecord
class Expansion:
    """The expanded text, or why nothing may be sent (``error``); ``notes`` are for the user."""

    text: str = ""
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    outcomes: list[CallOutcome] = field(default_factory=list)


def command_header(name: str, args: str) -> str:
    """What Claude Code records (and sends) for a typed command, before its expanded body."""
    return (
        f"<command-message>{name}</command-message>\n"
        f"<command-name>/{name}</command-name>\n"
        f"<command-args>{args}</command-args>"
    )


def _split(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:  # an unbalanced quote: plain words rather than nothing
        return args.split()


def substitute(
    text: str, args: str, *, zero_based: bool, variables: dict[str, str]
) -> tuple[str, bool]:
    """Variables and arguments replaced in ``text``; True when it had an argument placeholder."""
    words = _split(args)
    used = False

    def arg(m: re.Match[str]) -> str:
        nonlocal used
        used = True
        if m.group(1) is not None:
            index = int(m.group(1))
        elif m.group(2) is not None:
            index = int(m.group(2)) - (0 if zero_based else 1)
        else:
            return args
        return words[index] if 0 <= index < len(words) else m.group(0)

    text = _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), text)
    return _ARGS.sub(arg, text), used


def content_text(content: Any) -> str:
    """The text of a tool result's content (a string, or the text of its blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _denied(outcome: CallOutcome) -> str | None:
    verdict = outcome.verdict
    if verdict is not None and verdict.decision is Decision.DENY:
        return verdict.reason
    return None


async def _include_files(
    text: str, dirs: tuple[Path, Path, Path], run_tool: ToolRunner, result: Expansion
) -> list[str]:
    parts: list[str] = []
    cwd, home, project_dir = dirs
    for mention in find_mentions(text):
        ref = mention.label[1:]
        # Relative to the cwd, else to the project root (where command authors stand). Not a
        # file (an npm scope, a decorator, an e-mail): left as written.
        path = resolve_ref(mention.ref, (cwd, project_dir), home)
        if path is None or not path.is_file():
            continue
        outcome = await run_tool("Read", mention.read_input(path))
        result.outcomes.append(outcome)
        reason = _denied(outcome)
        if reason is not None:
            result.notes.append(f"@{ref} was not included: {reason}")
            parts.append(f"(@{ref} was not included: permission denied)")
            continue
        body = content_text(outcome.tool_result.get("content"))
        parts.append(f"Contents of {path} (@{ref}):\n{body}")
    return parts


async def expand_command(
    command: PromptCommand,
    args: str,
    *,
    run_tool: ToolRunner,
    cwd: Path,
    home: Path | None = None,
    project_dir: Path | None = None,
    session_id: str = "",
) -> Expansion:
    """The body of ``command`` for ``args``, with its commands run and files included."""
    result = Expansion()
    template = command.body
    zero_based = bool(_ZERO_BASED.search(template))
    variables = {
        "CLAUDE_SKILL_DIR": str(command.skill_dir or command.path.parent),
        "CLAUDE_PROJECT_DIR": str(project_dir or cwd),
        "CLAUDE_SESSION_ID": session_id,
    }
    pieces: list[str] = []
    texts: list[str] = []
    used_args = False
    pos = 0
    for m in [*_BANG.finditer(template), None]:
        chunk = template[pos : m.start() if m else len(template)]
        chunk, used = substitute(chunk, args, zero_based=zero_based, variables=variables)
        used_args |= used
        pieces.append(chunk)
        texts.append(chunk)
        if m is None:
            break
        shell, used = substitute(m.group(1), args, zero_based=zero_based, variables=variables)
        used_args |= used
        outcome = await run_tool(
            "Bash", {"command": shell, "description": f"/{command.name}: {shell}"[:200]}
        )
        result.outcomes.append(outcome)
        reason = _denied(outcome)
        if reason is not None:
            result.error = (
                f"/{command.name} was not run: its command `{shell}` was denied ({reason})"
            )
            return result
        output = content_text(outcome.tool_result.get("content")).rstrip("\n")
        pieces.append("" if _NO_OUTPUT.match(output) else output)
        pos = m.end()
    text = "".join(pieces).strip()
    if args.strip() and not used_args:
        text += f"\n\nARGUMENTS: {args.strip()}"
    dirs = (cwd, home if home is not None else Path.home(), project_dir or cwd)
    included = await _include_files("\n".join(texts) + "\n" + args, dirs, run_tool, result)
    if included:
        text += "\n\n" + "\n\n".join(included)
    result.text = text
    return result


def new_call_id() -> str:
    """An id for a call the expansion makes (never sent to the API)."""
    return f"cmd_{uuid.uuid4().hex[:16]}"
