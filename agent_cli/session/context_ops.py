"""The context part of the session: ``/compact``, ``/context`` and ``/rewind``.

``ContextOps`` is the part of ``AgentSession`` behind them; it holds the session's loop (its
conversation, context and checkpoints; the rewind record goes to its transcript). Compaction
itself is the loop's (``agent_cli.loop.compaction``); checkpoints are
``agent_cli.loop.checkpoints``: ``wire_checkpoints`` gives a session a store (at start, after
``/clear`` and ``/resume``), filled from the transcript when resuming.

A rewind to a prompt restores the conversation (everything from that prompt on goes; a
``system`` ``rewind`` record tells a later resume the same), the files (each back to its state
before that prompt), or both.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.loop.checkpoints import BLOB_DIR, CheckpointStore, FileChange
from agent_cli.loop.context_policy import ContextPolicy
from agent_cli.loop.events import AgentEvent
from agent_cli.loop.messages import text_of
from tools.records import datarecord

if TYPE_CHECKING:
    from agent_cli.loop.agent_loop import AgentLoop
    from agent_cli.loop.context_usage import ContextUsage
    from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter
    from tools.messages import Message

__all__ = [
    "ContextOps",
    "RewindPoint",
    "RewindPreview",
    "RewindResult",
    "context_policy",
    "wire_checkpoints",
    "wire_context",
]


@datarecord(frozen=True, slots=True)
class RewindPoint:
    """A prompt of the conversation ``/rewind`` can return to."""

    message_id: str
    text: str
    index: int  # of the prompt in the conversation


@datarecord(frozen=True, slots=True)
class RewindPreview:
    """What a rewind to one prompt would change, before it happens."""

    message_id: str
    messages_removed: int
    files: tuple[FileChange, ...]


@datarecord(frozen=True, slots=True)
class RewindResult:
    prompt: str  # the prompt's text (the TUI puts it back in the input)
    messages_removed: int
    files: tuple[FileChange, ...]
    errors: tuple[str, ...]


def context_policy(
    settings: Any, environ: Mapping[str, str] | None = None
) -> tuple[ContextPolicy, list[str]]:
    """The auto-compaction policy from loaded settings (``config.LoadedSettings``) and the
    session environment (settings ``env`` over the shell's; built from them when not given)."""
    if environ is None:
        from agent_cli.session.environment import session_environ

        environ = session_environ(settings.env)
    return ContextPolicy.from_settings(settings.merged.extras(), environ)


def wire_checkpoints(
    loop: AgentLoop,
    transcript: TranscriptWriter | None,
    reader: TranscriptReader | None = None,
) -> CheckpointStore:
    """A checkpoint store for ``loop``'s session: blobs beside the transcript (a temp dir
    when nothing is recorded), snapshots recorded through the loop's recorder."""
    if transcript is not None:
        blob_dir = transcript.session_dir / BLOB_DIR
    else:
        blob_dir = Path(tempfile.mkdtemp(prefix="nerve-file-history-"))

    def roots() -> list[Path]:
        perms = loop.ctx.permissions
        return [perms.cwd, *perms.additional_dirs]

    store = CheckpointStore(
        blob_dir,
        roots,
        record=lambda payload: loop.recorder.meta("file-history-snapshot", **payload),
    )
    if reader is not None:
        store.load(reader.checkpoint_order, reader.file_history)
        _restore_compacted_todos(loop, reader)
    loop.checkpoints = store
    loop.ctx.state.conversation.file_watch = store
    return store


def _restore_compacted_todos(loop: AgentLoop, reader: TranscriptReader) -> None:
    """A compacted conversation has no TodoWrite call left to restore the list from; the
    compaction recorded the list instead."""
    from tools.builtin.todo import todos_from_messages

    if reader.todos and todos_from_messages(loop.messages) is None:
        loop.ctx.state.conversation.todos = [dict(t) for t in reader.todos]
        loop.ctx.state.conversation.todos_owner = None


def wire_context(session: Any, settings: Any, reader: TranscriptReader | None) -> None:
    """At build: the compaction policy from settings (its warnings join the session's) and
    the checkpoint store (filled from the transcript when resuming)."""
    policy, warnings = context_policy(settings, session.loop.ctx.options.environ)
    session.loop.compaction.policy = policy
    session.warnings += warnings
    wire_checkpoints(session.loop, session.transcript, reader)


class ContextOps:
    """``/compact``, ``/context`` and ``/rewind`` over ``loop``."""

    def __init__(self, loop: AgentLoop) -> None:
        self._loop = loop

    def compact(self, instructions: str = "") -> AsyncIterator[AgentEvent]:
        """``/compact [instructions]``: the loop's compaction, as events (Esc: ``abort``)."""
        return self._loop.compact(instructions)

    def context_usage(self) -> ContextUsage:
        """``/context``: what fills the context window (``agent_cli.loop.context_usage``,
        imported on first use: a session that never asks does not load it)."""
        from agent_cli.loop.context_usage import context_usage

        loop = self._loop
        return context_usage(
            model=loop.model_name,
            policy=loop.compaction.policy,
            system_prompt=loop.system_prompt,
            tools=loop.tools,
            loaded_deferred=loop.ctx.options.loaded_deferred,
            messages=loop.messages,
            total=loop.compaction.tokens(loop),
            measured=loop.compaction.meter.measured,
        )

    def conversation_messages(self) -> list[Message]:
        """The conversation as it stands (the TUI redraws it after a rewind)."""
        return list(self._loop.messages)

    def rewind_points(self) -> list[RewindPoint]:
        """The prompts of the conversation, oldest first."""
        return [
            RewindPoint(str(m["_uuid"]), text_of(m) or str(m.get("content", "")), i)
            for i, m in enumerate(self._loop.messages)
            if m.get("role") == "user" and m.get("_uuid")
        ]

    def rewind_preview(self, message_id: str) -> RewindPreview:
        index = self._prompt_index(message_id)
        store = self._loop.checkpoints
        files = tuple(store.plan(message_id)) if store is not None else ()
        return RewindPreview(message_id, len(self._loop.messages) - index, files)

    def rewind(self, message_id: str, *, conversation: bool, files: bool) -> RewindResult:
        """Return to before the prompt ``message_id``: its conversation, its files, or both."""
        loop = self._loop
        index = self._prompt_index(message_id)
        prompt = text_of(loop.messages[index]) or str(loop.messages[index].get("content", ""))
        changes: tuple[FileChange, ...] = ()
        errors: list[str] = []
        store = loop.checkpoints
        if files and store is not None:
            changes = tuple(store.plan(message_id))
            errors = store.apply(message_id, changes)
            for change in changes:
                loop.ctx.state.read_files.forget(Path(change.path))
        removed = 0
        if conversation:
            from tools.builtin.todo import restore_todos

            removed = len(loop.messages) - index
            del loop.messages[index:]
            if loop.transcript is not None:
                loop.transcript.system("rewind", "Conversation rewound", rewindTo=message_id)
            loop.compaction.meter.reset()
            restore_todos(loop.ctx.state.conversation, loop.messages)
        return RewindResult(prompt, removed, changes, tuple(errors))

    def _prompt_index(self, message_id: str) -> int:
        for i, m in enumerate(self._loop.messages):
            if m.get("_uuid") == message_id:
                return i
        raise ValueError(f"no prompt {message_id!r} in this conversation")
