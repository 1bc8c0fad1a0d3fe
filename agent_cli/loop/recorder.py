"""Everything the agent loop writes to its transcript, in the order resume relies on.

The loop keeps the conversation (the message list); ``TurnRecorder`` mirrors it into the JSONL
transcript: user and meta messages, each tool_use the moment it is handed to the executor (before
it runs, so a process killed mid-stream still names every call that may have run), the whole
assistant message when it ends, each tool result as soon as it is known (never before the record
of its tool_use), and after each batch the read-file state and the background tasks when they
changed.

One streamed message may therefore be several ``assistant`` records: ``streaming`` ones, each
with the text streamed since the previous one and one tool_use, then the complete message. All
carry the same ``streamId``; the reader (``agent_cli.transcripts.fold``) folds them into one
message, the complete record winning.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from agent_cli.loop.turn_context import usage_dict
from agent_cli.model.turn import AssistantTurn
from tools.context import ToolUseContext
from tools.messages import Message
from tools.pipeline.types import CallOutcome

__all__ = ["TranscriptPort", "TurnRecorder"]


class TranscriptPort(Protocol):
    """What the loop writes to (``agent_cli.transcripts.transcript.TranscriptWriter``)."""

    def user(self, message: Mapping[str, Any], **extra: Any) -> str: ...

    def assistant(self, message: Mapping[str, Any], **extra: Any) -> str: ...

    def system(self, subtype: str, content: str, **extra: Any) -> str: ...

    def meta(self, record_type: str, **payload: Any) -> None: ...


class TurnRecorder:
    """The loop's transcript writer; with no transcript every call is a no-op.

    ``transcript`` may be swapped (``/clear``, ``/resume``); the snapshots of read-file state
    and background tasks carry over, as they did when they lived on the loop.
    """

    def __init__(self, transcript: TranscriptPort | None) -> None:
        self.transcript = transcript
        # Told once when the transcript stops being written (a full disk...); the turn goes on.
        self.on_failure: Callable[[str], None] | None = None
        # Results that finish before their tool_use is written (None: not holding).
        self._held: list[CallOutcome] | None = None
        self._stream_id: str | None = None  # the message being streamed, as its records name it
        self._streamed_text = ""  # text since the last streaming record
        self._recorded_calls: set[str] = set()  # tool_use ids of this message already written
        self._read_snapshot: list[dict[str, Any]] = []
        self._tasks_snapshot: list[dict[str, Any]] = []

    def user(self, message: Message, **extra: Any) -> str | None:
        """A user or meta message; keys starting with ``_`` are the loop's own and stay out.
        Returns the record's uuid (None without a transcript)."""
        if self.transcript is None:
            return None
        clean = {k: v for k, v in message.items() if not k.startswith("_")}
        uid = self.transcript.user(clean, **extra)
        self._report_failure()
        return uid

    def compact_boundary(self, trigger: str, pre_tokens: int) -> None:
        """Claude Code's boundary record: a new root whose logical parent is the last record
        before it; resume rebuilds the conversation from the last one on (and seeks there)."""
        if self.transcript is not None:
            from agent_cli.transcripts.tail import write_boundary

            write_boundary(self.transcript, trigger, pre_tokens)
            self._report_failure()

    def meta(self, record_type: str, **payload: Any) -> None:
        """A record outside the message chain (checkpoints, state snapshots)."""
        if self.transcript is not None:
            self.transcript.meta(record_type, **payload)
            self._report_failure()

    def assistant(self, message: Message, turn: AssistantTurn, model_name: str) -> None:
        """The assistant message with its id, model, stop reason and usage."""
        if self.transcript is not None:
            record = {
                **message,
                "id": turn.message_id,
                "model": turn.model or model_name,
                "stop_reason": turn.stop_reason,
                "usage": usage_dict(turn.usage),
            }
            extra = {"streamId": self._stream_id} if self._stream_id else {}
            self.transcript.assistant(record, **extra)
            self._report_failure()
        self._stream_id = None

    def start_message(self) -> None:
        """A model call begins: its records share a new ``streamId``; results wait for the record
        of their tool_use (``tool_use``) or of the whole message (``assistant``)."""
        self._held = []
        self._stream_id = uuid.uuid4().hex
        self._streamed_text = ""
        self._recorded_calls = set()

    def text(self, piece: str) -> None:
        """A text delta of the message being streamed (it joins the next streaming record)."""
        self._streamed_text += piece

    def retry(self) -> None:
        """The model is asked again: the text streamed so far is dropped, as the UI drops it."""
        self._streamed_text = ""

    def tool_use(self, block_id: str, name: str, tool_input: Any) -> None:
        """A tool_use is handed to the executor: record it now, before it can run."""
        if self.transcript is None or self._stream_id is None:
            return
        content: list[dict[str, Any]] = []
        if self._streamed_text:
            content.append({"type": "text", "text": self._streamed_text})
        # The API takes back only an object (the pipeline rejects any other input for the model).
        shown = dict(tool_input) if isinstance(tool_input, dict) else {}
        content.append({"type": "tool_use", "id": block_id, "name": name, "input": shown})
        self.transcript.assistant(
            {"role": "assistant", "content": content}, streamId=self._stream_id, streaming=True
        )
        self._streamed_text = ""
        self._recorded_calls.add(block_id)
        self._report_failure()

    def release_results(self) -> None:
        """The assistant message is written: write the results that waited, in order."""
        early, self._held = self._held or [], None
        for outcome in early:
            self.result(outcome)

    def result(self, outcome: CallOutcome) -> None:
        """Write one result as soon as it is known, so a kill later in the batch keeps it; never
        before the record of the tool_use that asked for it (resume rebuilds the batch)."""
        if self._held is not None and outcome.tool_use_id not in self._recorded_calls:
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
            self._report_failure()

    def batch_state(self, ctx: ToolUseContext) -> None:
        """After each batch: the read-file state, then the background tasks, when changed."""
        self.read_state(ctx)
        self.background_tasks(ctx)
        self._report_failure()

    def _report_failure(self) -> None:
        """Pass a write failure of the transcript on, once (``TranscriptWriter.take_failure``;
        the session's own writes between turns are reported here too)."""
        take = getattr(self.transcript, "take_failure", None)
        if self.on_failure is None or not callable(take):
            return
        message = take()
        if isinstance(message, str) and message:
            self.on_failure(message)

    def background_tasks(self, ctx: ToolUseContext) -> None:
        """After each batch (not only at exit), so a killed run still names its tasks."""
        manager = ctx.state.conversation.background_tasks
        if self.transcript is None or manager is None:
            return
        snapshot = manager.records()
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
