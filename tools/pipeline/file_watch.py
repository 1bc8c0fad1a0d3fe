"""The seam for file checkpoints: a watcher told before and after each tool call runs.

The session puts an object with this protocol in ``ctx.state.conversation.file_watch`` (the
agent CLI's checkpoint store); step 10 of the pipeline calls ``before_call`` right before
``tool.call`` and ``after_call`` right after, whatever the outcome. Sub-agents share it through
their shallow copy of the conversation state, so their edits are checkpointed with the turn
that ran them.

A watcher must never fail a call: the pipeline ignores its exceptions, and a watcher that cannot
save a checkpoint (a full disk) warns through ``ctx.callbacks.notify`` and lets the call run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tools.base import Tool
    from tools.context import ToolUseContext

__all__ = ["FileWatch", "file_watch"]


class FileWatch(Protocol):
    """Told about every call that runs; decides itself which calls matter."""

    async def before_call(
        self,
        tool: Tool[Any],
        parsed: Any,
        tool_input: Callable[[], dict[str, Any]],
        ctx: ToolUseContext,
    ) -> object | None:
        """Before ``tool.call`` with the parsed input; ``tool_input()`` gives its backfilled
        dict (absolute paths), built only if asked for. The returned token (None: nothing to
        do) goes to ``after_call``."""
        ...

    async def after_call(self, token: object) -> None: ...


def file_watch(ctx: ToolUseContext) -> FileWatch | None:
    return ctx.state.conversation.file_watch
