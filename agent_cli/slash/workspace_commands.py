"""``/add-dir`` (another working directory for this session) and ``/export`` (the
conversation as plain text in a file). Both work in the app and in ``nerve -p -c``."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_cli.slash.registry import SlashCommand, SlashHost
from agent_cli.slash.views import conversation_text

__all__ = ["WORKSPACE_COMMANDS", "default_export_name", "write_new_file"]


async def _add_dir(host: SlashHost, args: str) -> None:
    if not args.strip():
        host.say("usage: /add-dir <path>", "error")
        return
    add = getattr(host.session, "add_directory", None)
    if not callable(add):
        host.say("/add-dir is not available in this session.", "error")
        return
    try:
        added = add(args)
    except ValueError as exc:
        host.say(str(exc), "error")
        return
    host.say(f"Added {added} as a working directory for this session.")


def default_export_name(messages: Sequence[Mapping[str, Any]], now: float | None = None) -> str:
    """``2026-12-04-211500-fix-the-failing-test.txt``: the time and the first prompt's words."""
    first = next((m for m in messages if m.get("role") == "user"), None)
    words = conversation_text([first]).removeprefix("> ") if first else ""
    slug = "-".join(re.findall(r"[a-z0-9]+", words.lower())[:6])[:50] or "conversation"
    stamp = time.strftime("%Y-%m-%d-%H%M%S", time.localtime(now))
    return f"{stamp}-{slug}.txt"


def write_new_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all; an existing file is never replaced
    (``FileExistsError``)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.link(tmp, path)  # fails if the name exists: nothing the user had is overwritten
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


async def _export(host: SlashHost, args: str) -> None:
    messages = host.session.conversation_messages()
    if not any(m.get("role") == "user" for m in messages):
        host.say("Nothing to export yet.", "error")
        return
    cwd = Path(getattr(host.session, "cwd", Path.cwd()))
    target = (
        Path(args.strip()).expanduser() if args.strip() else Path(default_export_name(messages))
    )
    target = target if target.is_absolute() else cwd / target
    try:
        write_new_file(target, conversation_text(messages))
    except FileExistsError:
        host.say(f"{target} exists; give /export another file name.", "error")
        return
    except OSError as exc:
        host.say(f"Could not export to {target}: {exc.strerror or exc}", "error")
        return
    host.say(f"Conversation exported to {target}.")


WORKSPACE_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "add-dir", "add a working directory for this session", _add_dir, argument_hint="<path>"
    ),
    SlashCommand(
        "export", "write the conversation to a text file", _export, argument_hint="[file]"
    ),
)
