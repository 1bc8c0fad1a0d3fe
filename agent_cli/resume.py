"""Resuming sessions: finding the transcript, repairing it, forking it.

A resumed conversation must always be a valid request: any tool_use left without a result (a
crash mid-tool) gets an "interrupted" tool_result, written to the transcript too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.messages import answer_dangling_tool_uses
from agent_cli.transcript import TranscriptReader, TranscriptWriter, list_sessions

__all__ = ["SessionError", "copy_for_fork", "find_session", "repair_for_resume"]


class SessionError(Exception):
    """A session cannot start (bad settings, unknown session id...): message for the user."""


def find_session(cwd: Path, session_id: str | None) -> Path:
    """The transcript to resume: the newest in this directory, or the one matching an id prefix."""
    sessions = list_sessions(cwd)
    if not sessions:
        raise SessionError(f"No previous session found for {cwd}.")
    if not session_id:
        return sessions[0].path
    matches = [s for s in sessions if s.session_id.startswith(session_id)]
    if not matches:
        raise SessionError(f"No session {session_id!r} found for {cwd}.")
    if len(matches) > 1:
        raise SessionError(f"Session id {session_id!r} is ambiguous ({len(matches)} sessions).")
    return matches[0].path


def repair_for_resume(
    reader: TranscriptReader, transcript: TranscriptWriter | None
) -> list[dict[str, Any]]:
    """The stored conversation, with an "interrupted" result for any tool_use left unanswered."""
    messages = list(reader.messages)
    repaired = answer_dangling_tool_uses(messages)
    if transcript is not None and len(repaired) > len(messages) and repaired[-1]["role"] == "user":
        transcript.user(repaired[-1], interrupted=True)
    elif transcript is not None and repaired != messages:
        # a partially answered batch was completed inside an existing user message
        transcript.system("resume_repair", "tool_use left without a result marked interrupted")
    return repaired


def copy_for_fork(reader: TranscriptReader, transcript: TranscriptWriter) -> None:
    source_id = reader.session_id
    for rec in reader.records:
        payload = {
            k: v
            for k, v in rec.items()
            if k in ("message", "toolUseResult", "subtype", "content", "isMeta")
        }
        payload["forkedFrom"] = {"sessionId": source_id, "messageUuid": rec.get("uuid")}
        transcript.append(rec["type"], payload)
    for r in reader.session_rules:
        transcript.meta("session-rule", **r)
