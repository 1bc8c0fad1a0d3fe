"""Background tasks seen by the Agent SDK: lifecycle frames and ``stop_task``.

A ``Bash(run_in_background=true)`` task is announced as Claude Code does, so the SDK's
``TaskStartedMessage``/``TaskUpdatedMessage``/``TaskNotificationMessage`` parse:

- ``system``/``task_started`` (``task_id``, ``description``, ``task_type: "local_bash"``);
- when it ends, ``system``/``task_updated`` with ``patch: {status, end_time}`` (``completed``,
  ``failed`` or ``killed``) and ``system``/``task_notification`` (``status`` ``completed``,
  ``failed`` or ``stopped``, ``output_file``, ``summary``).

``stop_task`` (``ClaudeSDKClient.stop_task(task_id)``) ends the task's whole process group
through the same manager TaskStop uses; its end frames follow. An unknown id, or a task that has
already ended, is an error answer on that request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agent_cli.frontends.sdk.control import ControlError

__all__ = ["TaskFrames", "stop_task_response"]

_NOTIFIED_STATUS = {"completed": "completed", "failed": "failed", "killed": "stopped"}


def _manager(session: Any) -> Any:
    from tools.process.background import get_manager

    return get_manager(session.ctx)


def _summary(snap: Any) -> str:
    what = snap.description or snap.command
    if snap.status == "completed":
        return f'Background command "{what}" completed (exit code 0)'
    if snap.status == "killed":
        return f'Background command "{what}" was stopped'
    if snap.signal:
        return f'Background command "{what}" failed ({snap.signal})'
    return f'Background command "{what}" failed with exit code {snap.exit_code}'


class TaskFrames:
    """Writes the lifecycle frames of the session's background tasks with ``system``."""

    def __init__(self, session: Any, system: Callable[..., None]) -> None:
        self._system = system
        self._started: set[str] = set()
        self.unsubscribe = _manager(session).subscribe(self._on_task)

    def _on_task(self, snap: Any) -> None:
        if snap.task_id not in self._started:
            self._started.add(snap.task_id)
            self._system(
                "task_started",
                task_id=snap.task_id,
                description=snap.description or snap.command,
                task_type="local_bash",
                tool_use_id=None,
            )
        if snap.status == "running":
            return
        end_ms = int((snap.ended_at or time.time()) * 1000)
        patch = {"status": snap.status, "end_time": end_ms}
        self._system("task_updated", task_id=snap.task_id, patch=patch)
        self._system(
            "task_notification",
            task_id=snap.task_id,
            status=_NOTIFIED_STATUS[snap.status],
            output_file=snap.output_path,
            summary=_summary(snap),
            tool_use_id=None,
        )


async def stop_task_response(session: Any, request: dict[str, Any]) -> dict[str, Any]:
    """``stop_task``: end a running background task (its end frames follow)."""
    task_id = request.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise ControlError('stop_task needs a "task_id"')
    manager = _manager(session)
    task = manager.get(task_id)
    if task is None:
        known = ", ".join(manager.ids()) or "none"
        raise ControlError(f"no background task {task_id!r} (tasks: {known})")
    if task.status != "running":
        raise ControlError(f"task {task_id!r} is not running ({task.status})")
    await manager.stop(task_id)
    return {}
