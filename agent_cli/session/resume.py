"""Resuming sessions: finding the transcript, listing them, repairing one, forking it.

A resumed conversation must always be a valid request. The transcript may end anywhere (the
process can be killed at any moment): after the prompt, after an assistant message whose tools
never finished, or between the results of one batch. ``repair_for_resume`` merges the results
recorded one by one, answers every tool_use left without a result with an "interrupted" error
result, and writes that answer to the transcript so the file tells the same story next time.
``resumed_from`` is what a resume (``nerve -c``, ``-r ID``, ``/resume``) brings back into a
session: that conversation, the read-file state, the background tasks' records, and how each
call was shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent_cli.loop.messages import answer_dangling_tool_uses, tool_use_ids
from agent_cli.session.port import BackgroundTaskView
from agent_cli.session.restored_calls import restored_calls
from agent_cli.transcripts.records import prompt_text, read_records
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter, list_sessions
from tools.messages import Message

if TYPE_CHECKING:
    from permissions.types import PermissionMode, PermissionRule
    from tools.context import ReadFileState

__all__ = [
    "RESUME_INTERRUPTED",
    "Resumed",
    "SessionError",
    "coalesce_messages",
    "copy_for_fork",
    "find_session",
    "has_conversation",
    "previous_tasks",
    "repair_for_resume",
    "restore_read_files",
    "restored_permissions",
    "resumable_sessions",
    "resumed_from",
    "session_title",
]

# What the model is told about a call the previous run never finished: it may have had effects.
RESUME_INTERRUPTED = (
    "[Tool call interrupted: the session ended before this call finished. It may have run in "
    "part; check its effects before relying on them.]"
)

# Envelope keys the writer sets itself; everything else in a record is copied on fork.
_ENVELOPE_KEYS = frozenset(
    {
        "type",
        "uuid",
        "parentUuid",
        "sessionId",
        "cwd",
        "version",
        "gitBranch",
        "userType",
        "isSidechain",
        "agentId",
        "forkedFrom",
    }
)


class SessionError(Exception):
    """A session cannot start (bad settings, unknown session id...): message for the user."""


def find_session(cwd: Path, session_id: str | None) -> Path:
    """The transcript to resume: the newest conversation here, or the one an id prefix names.

    Without an id: the most recently written session of this directory, sessions run with
    ``-p`` included (Claude Code leaves those out of ``--continue``; we keep one rule). Files
    without any readable message (a run killed while starting, a file of
    garbage) are passed over: ``--continue`` means "the last conversation", and such a file has
    none. An explicit id is always honoured, even for an empty file.
    """
    sessions = list_sessions(cwd)
    if not session_id:
        for info in sessions:
            if has_conversation(info.path):
                return info.path
        raise SessionError(f"No previous conversation found for {cwd}.")
    exact = [s for s in sessions if s.session_id == session_id]
    matches = exact or [s for s in sessions if s.session_id.startswith(session_id)]
    if not matches:
        raise SessionError(f"No session {session_id!r} found for {cwd}.")
    if len(matches) > 1:
        raise SessionError(f"Session id {session_id!r} is ambiguous ({len(matches)} sessions).")
    return matches[0].path


def has_conversation(path: Path) -> bool:
    """True when the transcript holds at least one readable message (stops at the first)."""
    try:
        for rec in read_records(path):
            if rec["type"] in ("user", "assistant") and isinstance(rec.get("message"), dict):
                return True
    except OSError:
        return False
    return False


def resumable_sessions(cwd: Path, current: str) -> list[dict[str, Any]]:
    """For /resume: the stored sessions of ``cwd`` but ``current`` (the session in use),
    newest first: ``{"session_id", "title", "mtime", "size"}``."""
    out = []
    for s in list_sessions(cwd):
        if s.session_id == current:
            continue  # the session in use is not one to resume
        try:
            title = session_title(s.path)
        except OSError:
            title = None
        out.append(
            {
                "session_id": s.session_id,
                "title": title or "(empty)",
                "mtime": s.mtime,
                "size": s.size,
            }
        )
    return out


_TAIL_BYTES = 256 * 1024


def session_title(path: Path) -> str | None:
    """A session's title for a picker, without parsing the whole file.

    A ``custom-title`` (or older ``summary``) near the end wins; else the first prompt, read from
    the start and stopping there. Titles written long before the last 256 KB are missed; the
    first prompt then stands in.
    """
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            fh.seek(max(0, size - _TAIL_BYTES))
            tail = fh.read().splitlines()
    except OSError:
        return None
    for raw in reversed(tail):
        if b'"custom-title"' not in raw and b'"summary"' not in raw:
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and rec.get("type") in ("custom-title", "summary"):
            title = rec.get("customTitle") or rec.get("summary")
            if isinstance(title, str) and title.strip():
                return title
    try:
        for rec in read_records(path):
            if rec["type"] != "user" or rec.get("isMeta") or rec.get("isCompactSummary"):
                continue
            msg = rec.get("message")
            text = prompt_text(msg.get("content") if isinstance(msg, dict) else None)
            if text:
                return text
    except OSError:
        return None
    return None


def coalesce_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge runs of user messages (results recorded one per line) into one, results first."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        if out and msg["role"] == "user" and out[-1]["role"] == "user":
            blocks = _blocks(out[-1]["content"]) + _blocks(msg["content"])
            results = [b for b in blocks if b.get("type") == "tool_result"]
            others = [b for b in blocks if b.get("type") != "tool_result"]
            merged: dict[str, Any] = {"role": "user", "content": results + others}
            # A prompt keeps its uuid through the merge: /rewind returns to it.
            uid = out[-1].get("_uuid") or msg.get("_uuid")
            if uid:
                merged["_uuid"] = uid
            out[-1] = merged
        else:
            out.append(msg)
    return out


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content if isinstance(b, dict)]


def _unanswered_tail(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of the last assistant message's tool_uses that no later message answers."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "assistant":
            answered = {
                b.get("tool_use_id")
                for m in messages[i + 1 :]
                for b in _blocks(m["content"])
                if b.get("type") == "tool_result"
            }
            return [t for t in tool_use_ids(messages[i]) if t not in answered]
    return []


def repair_for_resume(
    reader: TranscriptReader, transcript: TranscriptWriter | None
) -> list[Message]:
    """The stored conversation, made valid: every tool_use has exactly one tool_result.

    The tail (the call the process died in) is answered in the transcript too; a gap in the
    middle (a line lost to corruption) is answered in memory only, the same way every time.
    """
    marked = list(reader.messages)
    for uid, index in reader.prompts.items():
        marked[index] = {**marked[index], "_uuid": uid}  # /rewind returns to these
    messages = coalesce_messages(marked)
    missing = _unanswered_tail(messages)
    if missing:
        answer: dict[str, Any] = {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": t,
                    "content": RESUME_INTERRUPTED,
                    "is_error": True,
                }
                for t in missing
            ],
        }
        if transcript is not None:
            transcript.user(answer, interrupted=True)
        messages = coalesce_messages([*messages, answer])
    # The transcript's messages, as recorded, go to the loop from here (the API judges them).
    return answer_dangling_tool_uses(cast("list[Message]", messages), RESUME_INTERRUPTED)


class Resumed:
    """What a stored conversation brings back into a session."""

    __slots__ = ("background_tasks", "calls", "messages", "warnings")
    messages: list[Message]  # repaired (``repair_for_resume``): the loop's conversation
    background_tasks: list[dict[str, Any]]  # the records of the run's tasks (``/tasks``)
    calls: dict[str, dict[str, Any]]  # tool_use id -> its output's view (``restored_calls``)
    warnings: list[str]  # what could not be restored (of the read-file state)

    def __init__(
        self,
        messages: list[Message],
        background_tasks: list[dict[str, Any]],
        calls: dict[str, dict[str, Any]],
        warnings: list[str],
    ) -> None:
        self.messages = messages
        self.background_tasks = background_tasks
        self.calls = calls
        self.warnings = warnings


def resumed_from(
    reader: TranscriptReader, transcript: TranscriptWriter | None, read_files: ReadFileState
) -> Resumed:
    """The conversation ``reader`` holds, repaired (its tail answered in ``transcript``); what
    the model had read goes back into ``read_files`` (``restore_read_files``)."""
    warnings = restore_read_files(reader, read_files)
    return Resumed(
        messages=repair_for_resume(reader, transcript),
        background_tasks=reader.background_tasks,
        calls=restored_calls(reader.records),
        warnings=warnings,
    )


def restore_read_files(reader: TranscriptReader, state: ReadFileState) -> list[str]:
    """Put back what the model had read, so an unchanged file can be edited without a re-read
    (Edit still refuses a file whose mtime and content changed since)."""
    from tools.context import ReadRecord

    warnings = []
    for rec in reader.read_file_state:
        try:
            state.record(
                ReadRecord(
                    Path(rec["path"]),
                    str(rec["content_hash"]),
                    int(rec["mtime_ns"]),
                    bool(rec.get("partial", False)),
                )
            )
        except (KeyError, TypeError, ValueError):
            warnings.append("skipped a malformed read-file-state entry")
    return warnings


def restored_permissions(
    reader: TranscriptReader, cwd: Path
) -> tuple[list[PermissionRule], PermissionMode | None, list[str]]:
    """The session rules and permission mode a stored session had, and warnings.

    A stored rule that no longer parses is skipped with a warning. The mode is ``None`` when
    there is none to restore: none recorded, one this version does not know, or plan or bypass
    (a resumed session is never silently back in either).
    """
    from permissions.rules import RuleSyntaxError, make_rule
    from permissions.types import PermissionMode, RuleSource

    rules: list[PermissionRule] = []
    warnings: list[str] = []
    for stored in reader.session_rules:
        try:
            rules.append(make_rule(stored["rule"], stored["behavior"], RuleSource.SESSION, cwd))
        except (RuleSyntaxError, ValueError):
            warnings.append(f"skipped a stored session rule {stored!r}")
    mode: PermissionMode | None = None
    if reader.permission_mode:
        try:
            mode = PermissionMode.parse(reader.permission_mode)
        except ValueError:
            mode = None
        if mode in (PermissionMode.PLAN, PermissionMode.BYPASS):
            mode = None
    return rules, mode, warnings


def copy_for_fork(reader: TranscriptReader, transcript: TranscriptWriter) -> None:
    """Copy the conversation and its state into a new session; the original is not touched.

    Copied records keep their fields and timestamps and carry ``forkedFrom`` naming the
    source session and record.
    """
    source_id = reader.session_id
    for rec in reader.records:
        payload = {k: v for k, v in rec.items() if k not in _ENVELOPE_KEYS}
        payload["forkedFrom"] = {"sessionId": source_id, "messageUuid": rec.get("uuid")}
        transcript.append(rec["type"], payload)
    for r in reader.session_rules:
        transcript.meta("session-rule", **r)
    if reader.read_file_state:
        transcript.meta("read-file-state", files=reader.read_file_state)
    if reader.background_tasks:
        transcript.meta("background-tasks", tasks=reader.background_tasks)
    if reader.title:
        transcript.meta("custom-title", customTitle=reader.title)


def previous_tasks(tasks: list[dict[str, Any]]) -> list[BackgroundTaskView]:
    """Background tasks recorded by an earlier run, as views.

    None of them runs under this process any more: one the earlier run left "running" (it was
    killed before it could stop its tasks) is shown as ``detached`` — its process may still be
    alive on its own, and its output log is still on disk.
    """
    views = []
    for t in tasks:
        task_id = str(t.get("task_id") or t.get("id") or "")
        if not task_id:
            continue
        status = str(t.get("status") or "unknown")
        views.append(
            BackgroundTaskView(
                task_id, str(t.get("command", "")), "detached" if status == "running" else status
            )
        )
    return views
