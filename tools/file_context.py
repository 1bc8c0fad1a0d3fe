"""Context that comes with a file: instructions the model gets when it reads a matching file.

``tools`` does not know where such instructions live (path-scoped rules files are
``agent_cli``'s), so a session may put a :class:`FileContextProvider` in
``ctx.options.services.file_context``; the Read tool asks it after each successful read and
attaches what it returns as system reminders (the tool result's ``new_messages``). A provider
that fails is ignored: extra context must never cost the read itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tools.context import ToolUseContext
    from tools.messages import Message

__all__ = ["FileContextProvider", "file_context_messages"]


@runtime_checkable
class FileContextProvider(Protocol):
    """Texts to attach when ``agent_id`` (None: the main agent) has read ``path``."""

    def on_read(self, path: Path, agent_id: str | None) -> list[str]: ...


def file_context_messages(path: Path, ctx: ToolUseContext) -> list[Message]:
    """System reminders for a file just read (empty without a provider)."""
    from tools.messages import system_reminder

    provider = ctx.options.services.file_context
    if provider is None:
        return []
    try:
        texts = provider.on_read(path, ctx.agent.agent_id)
    except Exception:
        return []
    return [system_reminder(text) for text in texts if text.strip()]
