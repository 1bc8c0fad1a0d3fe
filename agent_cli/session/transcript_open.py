"""Opening the transcript a session writes: new, resumed or forked, and never shared.

Two processes appending to one transcript would interleave two conversations in one history.
The writer holds a lock (``agent_cli.transcripts.lock``); a resume (``nerve -c``, ``-r ID``,
``/resume``) of a session that another Nerve is writing forks it instead: the new session
starts as a copy of everything recorded so far, the other process keeps the original, and the
user is told which process holds it and which session they are in now. ``-c`` keeps working in
a second terminal, which is what Claude Code users expect of it, and nothing is lost.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from agent_cli.session.resume import SessionError, copy_for_fork
from agent_cli.transcripts.lock import SessionInUse
from agent_cli.transcripts.transcript import TranscriptReader, TranscriptWriter, project_dir

__all__ = ["open_transcript"]


def open_transcript(
    cwd: Path,
    session_id: str,
    *,
    git_branch: str | None,
    reader: TranscriptReader | None = None,
    fork: bool = False,
) -> tuple[TranscriptWriter, list[str]]:
    """The locked writer of session ``session_id`` (resuming ``reader`` when given, or forking
    it into a new session when ``fork``), and the notices for the user."""
    notices: list[str] = []
    if reader is not None and not fork:
        try:
            writer = _writer(cwd, session_id, git_branch, reader.last_uuid)
        except SessionInUse as busy:
            fork = True
            new_id = str(uuid.uuid4())
            notices.append(
                f"Session {session_id} is in use by {busy.holder_text()}; continuing in a copy "
                f"of it, session {new_id} (the other process keeps the original)."
            )
            session_id = new_id
        else:
            return writer, notices
    try:
        writer = _writer(cwd, session_id, git_branch, None)
    except SessionInUse as busy:  # an explicit --session-id another process is writing
        raise SessionError(str(busy)) from busy
    if reader is not None and fork:
        copy_for_fork(reader, writer)
    return writer, notices


def _writer(
    cwd: Path, session_id: str, git_branch: str | None, last_uuid: str | None
) -> TranscriptWriter:
    return TranscriptWriter(
        project_dir(cwd) / f"{session_id}.jsonl",
        session_id=session_id,
        cwd=cwd,
        git_branch=git_branch,
        last_uuid=last_uuid,
        lock=True,
    )
