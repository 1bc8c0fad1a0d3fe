"""SessionStart hooks: once before the first prompt of a conversation, at start or after /resume.

``StartHooks`` is the part of ``AgentSession`` that runs them (``source``: ``startup``, or
``resume`` when the session continues a stored conversation). What they print is shown as
warnings; their additional context joins the conversation (and the transcript) as a system
reminder; the variables their ``CLAUDE_ENV_FILE`` exports join the session environment the
tools start commands with (``tools.hooks.env_file``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.loop.events import AgentEvent, Notice

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop

__all__ = ["StartHooks"]


class StartHooks:
    """The SessionStart hooks of ``loop``'s session, due before its next prompt (``source``) or
    not (None)."""

    def __init__(self, loop: AgentLoop, source: str | None) -> None:
        self._loop = loop
        self._source = source

    def again(self, source: str) -> None:
        """A new conversation (``/resume``): the hooks run before its first prompt."""
        self._source = source

    async def run(self, model: str) -> AsyncIterator[AgentEvent]:
        """The hooks, if due (``model``: the session's, as the hooks are told)."""
        if self._source is None:
            return
        async for event in self._run_hooks(self._source, model):
            yield event
        self._source = None

    async def _run_hooks(self, source: str, model: str) -> AsyncIterator[AgentEvent]:
        from agent_cli.loop.messages import system_reminder

        loop = self._loop
        hooks = loop.ctx.hooks
        if hooks is None or not hooks.has_hooks("SessionStart"):
            return
        outcome = await hooks.run_event(
            "SessionStart", {"source": source, "model": model}, match_value=source
        )
        for msg in outcome.system_messages:
            yield Notice(msg, "warning")
        env_file = getattr(hooks, "env_file", None)
        if env_file is not None:
            async for event in self._export_env(env_file):
                yield event
        for text in outcome.additional_context:
            reminder = system_reminder(f"SessionStart hook context:\n{text}", ephemeral=False)
            loop.messages.append(reminder)
            if loop.transcript is not None:
                loop.transcript.user(reminder, isMeta=True)

    async def _export_env(self, env_file: Path) -> AsyncIterator[AgentEvent]:
        """What the hooks wrote to ``CLAUDE_ENV_FILE`` joins the session environment."""
        from tools.hooks.env_file import exported_by_env_file

        base = self._loop.ctx.options.environ
        base = dict(os.environ if base is None else base)
        exported, problem = await exported_by_env_file(env_file, base)
        if problem is not None:
            yield Notice(problem, "warning")
        if exported:
            ctx = self._loop.ctx
            environ = {**base, **exported}
            self._loop.ctx = replace(ctx, options=replace(ctx.options, environ=environ))
