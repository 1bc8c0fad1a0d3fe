"""The first-start question about a project's ``.mcp.json`` servers: use all, pick, or none.

Host-agnostic: it asks through ``SlashHost.choose`` (a modal list in the TUI; print mode has
no picker, so there the servers stay unapproved until ``/mcp approve all|none|<name>...``).
The first option is "No": a stray Enter must not start code a repository brought. Esc
decides nothing, and the question comes back at the next start. The answer is saved in local
settings by the session (``agent_cli.session.mcp_approval``).

The question is driven by ``choose`` callbacks, so a slash command returns at once and the
app keeps handling input while the modal is up; ``ask_project_servers`` awaits the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agent_cli.slash.registry import SlashHost

__all__ = ["APPROVAL_OPTIONS", "ask_project_servers", "start_project_question"]

APPROVAL_OPTIONS = (
    "No, continue without these servers",
    "Use all of them (and later ones added to this project's .mcp.json)",
    "Pick which to use…",
)
_LATER = "Project MCP servers not started; you will be asked again (or /mcp approve)."


def start_project_question(host: SlashHost, done: Callable[[], None] | None = None) -> bool:
    """Put up the question; ``done`` is called once it is answered or dismissed.

    Returns False (and calls nothing) when no project server is waiting.
    """
    session: Any = host.session
    pending_of = getattr(session, "pending_mcp_servers", None)
    approve = getattr(session, "approve_mcp_servers", None)
    pending: list[tuple[str, str]] = pending_of() if callable(pending_of) else []
    if not pending or not callable(approve):
        return False

    def finish() -> None:
        if done is not None:
            done()

    async def use(choice: list[str] | str) -> None:
        try:
            host.say("\n".join(await approve(choice)))
        except Exception as exc:  # the session goes on; the user can retry /mcp approve
            host.say(f"MCP approval failed: {type(exc).__name__}: {exc}", "error")
        finally:
            finish()

    picked: list[str] = []

    async def ask_one(index: int) -> None:
        name, target = pending[index]

        async def answered(pick: int | None) -> None:
            if pick is None:
                host.say(_LATER)
                finish()
                return
            if pick == 1:
                picked.append(name)
            if index + 1 < len(pending):
                await ask_one(index + 1)
            else:
                await use(list(picked) if picked else "none")

        host.choose(f"Use MCP server {name}?\n  {target}", ["No", "Yes"], answered)

    async def first(index: int | None) -> None:
        if index is None:
            host.say(_LATER)
            finish()
        elif index == 0:
            await use("none")
        elif index == 1:
            await use("all")
        else:
            await ask_one(0)

    listing = "\n".join(f"  {name}: {target}" for name, target in pending)
    title = f"This project's .mcp.json wants to start MCP servers:\n{listing}\nUse them?"
    host.choose(title, list(APPROVAL_OPTIONS), first)
    return True


async def ask_project_servers(host: SlashHost) -> None:
    """Ask about the session's pending project servers and wait for the answer."""
    ended = asyncio.Event()
    if start_project_question(host, ended.set):
        await ended.wait()
