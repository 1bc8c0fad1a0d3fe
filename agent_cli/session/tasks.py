"""The session's background tasks: the ones it runs, and the ones a resumed run left behind.

``BackgroundTasks`` is the part of ``AgentSession`` behind ``/tasks``. The live tasks are the
conversation's manager's (``ConversationState.background_tasks``, made by the first Bash call
with ``run_in_background``); the records of the run a session resumed are listed too, but are no
longer ours to manage (``agent_cli.session.resume.previous_tasks``). When the session closes,
every live task is stopped first, then their records go to the transcript, so the record says
how each one ended.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.session.port import BackgroundTaskView
from agent_cli.session.resume import previous_tasks

if TYPE_CHECKING:
    from agent_cli.loop.recorder import TranscriptPort
    from tools.context import ConversationState

__all__ = ["BackgroundTasks"]


class BackgroundTasks:
    """The tasks of ``conversation`` and the ``restored`` records of a resumed run."""

    def __init__(self, conversation: ConversationState, restored: list[dict[str, Any]]) -> None:
        self._conversation = conversation
        self._restored = restored

    def views(self) -> list[BackgroundTaskView]:
        manager = self._conversation.background_tasks
        live = [] if manager is None else manager.list()
        views = [BackgroundTaskView(s.task_id, s.command, s.status) for s in live]
        seen = {v.task_id for v in views}
        # Tasks of the run this session resumed: listed, but no longer ours to manage.
        views += [v for v in previous_tasks(self._restored) if v.task_id not in seen]
        return views

    def restore(self, records: list[dict[str, Any]]) -> None:
        """``/resume``: list the resumed run's ``records`` (instead of the last one's)."""
        self._restored = list(records)

    async def stop_all(self, transcript: TranscriptPort | None) -> None:
        """Session end: stop every live task, then record how each ended."""
        manager = self._conversation.background_tasks
        if manager is None:
            return
        await manager.stop_all()  # first, so the record says how each task ended
        if transcript is not None:
            transcript.meta("background-tasks", tasks=manager.records())
