"""Everything the agent loop writes to its transcript, in the order resume relies on.

The loop keeps the conversation (the message list); ``TurnRecorder`` mirrors it into the JSONL
transcript: user and meta messages, the assistant message, each tool result as soon as it is
known (but never before the assistant message that asked for it), and after each batch the
read-file state and the background tasks when they changed.
"""

from __future__ import annotations

from typing import Any, Protocol

from agent_cli.loop.turn_context import usage_dict
from agent_cli.model.turn import AssistantTurn
from tools.context import ToolUseContext
from tools.execution.pipeline_types import CallOutcome

__all__ = ["TranscriptPort", "TurnRecorder"]


class TranscriptPort(Protocol):
    """What the loop writes to (``agent_cli.transcripts.transcript.TranscriptWriter``)."""

    def user(self, message: dict[str, Any], **extra: Any) -> str: ...

    def assistant(self, message: dict[str, Any], **extra: Any) -> str: ...

    def system(self, subtype: str, content: str, **extra: Any) -> str: ...

    def meta(self, record_type: str, **payload: Any) -> None: ...


class TurnRecorder:
    """The loop's transcript writer; with no transcript every call is a no-op.

    ``transcript`` may be swapped (``/clear``, ``/resume``); the snapshots of read-file state
    and background tasks carry over, as they did when they lived on the loop.
    """

    def __init__(self, transcript: TranscriptPort | None) -> None:
        self.transcript = transcript
        # Results that finish before their assistant message is written (None: not holding).
        self._held: list[CallOutcome] | None = None
        self._read_snapshot: list[dict[str, Any]] = []
        self._tasks_snapshot: list[dict[str, Any]] = []

    def user(self, message: dict[str, Any], **extra: Any) -> None:
        """A user or meta message; keys starting with ``_`` are the loop's own and stay out."""
        if self.transcript is not None:
            clean = {k: v for k, v in message.items() if not k.startswith("_")}
            self.transcript.user(clean, **extra)

    def assistant(self, message: dict[str, Any], turn: AssistantTurn, model_name: str) -> None:
        """The assistant message with its id, model, stop reason and usage."""
        if self.transcript is not None:
            record = {
                **message,
                "id": turn.message_id,
                "model": turn.model or model_name,
                "stop_reason": turn.stop_reason,
                "usage": usage_dict(turn.usage),
            }
            self.transcript.assistant(record)

    def hold_results(self) -> None:
        """From now until ``release_results``, results wait for their assistant message."""
        self._held = []

    def release_results(self) -> None:
        """The assistant message is written: write the results that waited, in order."""
        early, self._held = self._held or [], None
        for outcome in early:
            self.result(outcome)

    def result(self, outcome: CallOutcome) -> None:
        """Write one result as soon as it is known, so a kill later in the batch keeps it; never
        before the assistant message that asked for it (resume rebuilds the batch)."""
        if self._held is not None:
            self._held.append(outcome)
            return
        if self.transcript is not None:
            self.transcript.user(
                {"role": "user", "content": [outcome.tool_result]},
                toolUseResult={
                    "tool_use_id": outcome.tool_use_id,
                    "tool_name": outcome.tool_name,
                    "output": outcome.output,
                },
            )

    def batch_state(self, ctx: ToolUseContext) -> None:
        """After each batch: the read-file state, then the background tasks, when changed."""
        self.read_state(ctx)
        self.background_tasks(ctx)

    def background_tasks(self, ctx: ToolUseContext) -> None:
        """After each batch (not only at exit), so a killed run still names its tasks."""
        manager = ctx.state.shared.get("background_tasks")
        records = getattr(manager, "records", None)
        if self.transcript is None or not callable(records):
            return
        snapshot = records()
        if snapshot != self._tasks_snapshot:
            self._tasks_snapshot = snapshot
            self.transcript.meta("background-tasks", tasks=snapshot)

    def read_state(self, ctx: ToolUseContext) -> None:
        """What the model has read (path, hash, mtime), so resume can restore it."""
        if self.transcript is None:
            return
        snapshot = [
            {
                "path": str(r.path),
                "content_hash": r.content_hash,
                "mtime_ns": r.mtime_ns,
                "partial": r.partial,
            }
            for r in ctx.state.read_files.records()
        ]
        if snapshot != self._read_snapshot:
            self._read_snapshot = snapshot
            self.transcript.meta("read-file-state", files=snapshot)
