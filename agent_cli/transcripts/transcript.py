"""Session transcripts: one append-only JSONL file per session, one record per line.

Layout (under the user data dir, ``NERVE_DATA_DIR`` overrides it)::

    projects/<slug-of-cwd>/<session-id>.jsonl                       the session
    projects/<slug-of-cwd>/<session-id>/subagents/agent-<id>.jsonl  sidechains
    projects/<slug-of-cwd>/<session-id>/tool-results/<id>.txt       persisted results

Durability: every record is one ``os.write`` of one whole line on an ``O_APPEND`` descriptor, so
killing the process at any moment loses at most the record being written, and the reader skips
a torn last line (and any garbage line) with a warning (``records.read_records``). Writing never raises for the disk: a
failed write (a full disk, an unwritable data dir) is kept in ``failure`` for the session to
tell the user once (``take_failure``), the session goes on, and after a short write the next
record starts on a fresh line. Text that UTF-8 cannot encode (lone surrogates, from a model's
JSON or an undecodable file name) is written as JSON escapes, so the line stays readable.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import os
import re
import uuid as _uuid
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from agent_cli import __version__
from agent_cli.transcripts.fold import MessageFolder
from agent_cli.transcripts.lock import SessionInUse, lock_holder, try_lock
from agent_cli.transcripts.records import prompt_text
from tools.records import datarecord

__all__ = [
    "ENVELOPE_TYPES",
    "SessionInfo",
    "TranscriptReader",
    "TranscriptWriter",
    "data_dir",
    "list_sessions",
    "project_dir",
    "project_slug",
]

ENVELOPE_TYPES = frozenset({"user", "assistant", "system"})
# Record types the reader knows; anything else is skipped with a warning on resume.
KNOWN_TYPES = ENVELOPE_TYPES | {
    "permission-mode",
    "session-rule",
    "read-file-state",
    "background-tasks",
    "custom-title",
    "summary",
    "session-meta",
    "file-history-snapshot",
    "todo-list",
}


def data_dir() -> Path:
    env = os.environ.get("NERVE_DATA_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("nerve", appauthor=False))


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


def project_slug(cwd: Path | str) -> str:
    """``/home/a/my_app`` -> ``-home-a-my-app``; long paths are cut and suffixed by a hash."""
    raw = str(cwd)
    slug = re.sub(r"[^a-zA-Z0-9]", "-", raw)
    if len(slug) <= 200:
        return slug
    h = 0
    for ch in raw:  # a small stable string hash (Java-style), as a base-36 suffix
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return f"{slug[:200]}-{_base36(h)}"


def project_dir(cwd: Path | str) -> Path:
    return data_dir() / "projects" / project_slug(cwd)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TranscriptWriter:
    """Appends records to one session file (or a sidechain file), one ``write`` per line."""

    def __init__(
        self,
        path: Path,
        *,
        session_id: str,
        cwd: Path,
        git_branch: str | None = None,
        agent_id: str | None = None,
        last_uuid: str | None = None,
        lock: bool = False,
    ) -> None:
        """With ``lock``, the session is this process's alone while it is open: another
        process's writer raises ``SessionInUse`` naming the holder (``agent_cli.transcripts.
        lock``)."""
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.git_branch = git_branch
        self.agent_id = agent_id
        self.last_uuid = last_uuid
        self.failure: str | None = None  # the first write error, in words for the user
        self._failure_told = False
        self._torn = False  # a write stopped mid-line: the next record starts on a fresh line
        self._closed = False
        self._fd: int | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            self._fail(exc)
            return
        if lock and not try_lock(self._fd):
            os.close(self._fd)
            self._fd, self._closed = None, True
            raise SessionInUse(path, lock_holder(path))
        self._repair_torn_tail()

    @classmethod
    def for_session(
        cls, cwd: Path, session_id: str | None = None, *, git_branch: str | None = None
    ) -> TranscriptWriter:
        sid = session_id or str(_uuid.uuid4())
        return cls(
            project_dir(cwd) / f"{sid}.jsonl", session_id=sid, cwd=cwd, git_branch=git_branch
        )

    @property
    def session_dir(self) -> Path:
        """Side data of the session (tool results, sidechains) lives beside the transcript."""
        if self.agent_id is not None:
            return self.path.parent.parent
        return self.path.with_suffix("")

    def _repair_torn_tail(self) -> None:
        # A crash may have left a last line without its newline; start our first record on a
        # fresh line so it is not glued to the torn one.
        try:
            size = os.path.getsize(self.path)
            if size == 0:
                return
            with open(self.path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    self._write_bytes(b"\n")
        except OSError:
            pass

    def _write_bytes(self, data: bytes) -> None:
        if self._closed:
            raise ValueError("transcript is closed")
        if self._fd is None:
            return  # never opened: ``failure`` says why
        view = memoryview(b"\n" + data if self._torn else data)
        written = 0
        try:
            while written < len(view):
                written += os.write(self._fd, view[written:])
        except OSError as exc:
            if written:
                self._torn = True
            self._fail(exc)
            return
        self._torn = False

    def _fail(self, exc: OSError) -> None:
        if self.failure is None:
            why = exc.strerror or str(exc)
            self.failure = (
                f"Recording this session failed ({self.path}: {why}). The conversation goes on, "
                "but what happens from here may be missing when you resume it."
            )

    def take_failure(self) -> str | None:
        """The first write failure, once (the session tells the user about it one time)."""
        if self.failure is None or self._failure_told:
            return None
        self._failure_told = True
        return self.failure

    def append(self, record_type: str, payload: dict[str, Any], *, chain: bool = True) -> str:
        """Write one record. Envelope records (user/assistant/system) join the parent chain."""
        rec_uuid = str(_uuid.uuid4())
        record: dict[str, Any] = {"type": record_type}
        if record_type in ENVELOPE_TYPES or chain:
            record.update(
                {
                    "uuid": rec_uuid,
                    "parentUuid": self.last_uuid,
                    "sessionId": self.session_id,
                    "timestamp": _now(),
                    "cwd": str(self.cwd),
                    "version": __version__,
                    "gitBranch": self.git_branch,
                    "userType": "external",
                    "isSidechain": self.agent_id is not None,
                }
            )
            if self.agent_id is not None:
                record["agentId"] = self.agent_id
        else:
            record.update({"sessionId": self.session_id, "timestamp": _now()})
        record.update(payload)
        self._write_bytes(_encode(record))
        if record_type in ENVELOPE_TYPES:
            self.last_uuid = rec_uuid
        return rec_uuid

    # Convenience writers -------------------------------------------------------------------

    def user(self, message: Mapping[str, Any], **extra: Any) -> str:
        return self.append("user", {"message": message, **extra})

    def assistant(self, message: Mapping[str, Any], **extra: Any) -> str:
        return self.append("assistant", {"message": message, **extra})

    def system(self, subtype: str, content: str, **extra: Any) -> str:
        return self.append("system", {"subtype": subtype, "content": content, **extra})

    def meta(self, record_type: str, **payload: Any) -> None:
        self.append(record_type, payload, chain=False)

    def sidechain(self, agent_id: str) -> TranscriptWriter:
        path = self.session_dir / "subagents" / f"agent-{agent_id}.jsonl"
        return TranscriptWriter(
            path,
            session_id=self.session_id,
            cwd=self.cwd,
            git_branch=self.git_branch,
            agent_id=agent_id,
        )

    def close(self) -> None:
        self._closed = True
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _dumps(record: dict[str, Any], *, ascii_only: bool = False) -> str:
    return (
        json.dumps(record, ensure_ascii=ascii_only, separators=(",", ":"), default=_jsonable) + "\n"
    )


def _encode(record: dict[str, Any]) -> bytes:
    """One record as one line of UTF-8 JSON, whatever it holds."""
    try:
        line = _dumps(record)
    except (TypeError, ValueError, RecursionError):
        # An odd extra (a cyclic tool output...) must not cost the message: keep it as text.
        record = {k: v if k == "message" else str(v) for k, v in record.items()}
        line = _dumps(record)
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate: as a JSON escape it reads back as the same string.
        return _dumps(record, ascii_only=True).encode("ascii")


def _jsonable(value: Any) -> Any:
    """Tool outputs are dataclasses or pydantic models: store their fields, not their repr."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:  # a model that cannot dump itself is still recorded, as text
            return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)  # Path, datetime, enums...


@datarecord
class TranscriptReader:
    """Everything a resume needs, rebuilt from one transcript file."""

    path: Path
    warnings: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)  # API-shaped, in order
    records: list[dict[str, Any]] = field(default_factory=list)  # envelope records, in order
    permission_mode: str | None = None
    session_rules: list[dict[str, str]] = field(default_factory=list)
    read_file_state: list[dict[str, Any]] = field(default_factory=list)
    background_tasks: list[dict[str, Any]] = field(default_factory=list)
    title: str | None = None
    last_uuid: str | None = None
    session_id: str | None = None
    # Since the last compact_boundary (see ``tail``):
    compacted: bool = False
    prompts: dict[str, int] = field(default_factory=dict)  # prompt uuid -> index in messages
    checkpoint_order: list[str] = field(default_factory=list)
    file_history: dict[str, dict[str, Any]] = field(default_factory=dict)
    todos: list[dict[str, Any]] | None = None  # the todo list a compaction recorded

    @classmethod
    def load(cls, path: Path) -> TranscriptReader:
        """Read a transcript; never raises on bad content (only OSError for an unreadable file).
        A compacted one is read from its last boundary on (``tail``)."""
        from agent_cli.transcripts import tail

        r = cls(path)
        unknown: set[str] = set()
        tasks: dict[str, dict[str, Any]] = {}
        folder = MessageFolder(r.messages)
        records, r.session_id = tail.records_to_read(path, r.warnings)
        for rec in records:
            kind = rec["type"]
            r.session_id = r.session_id or _str_or_none(rec.get("sessionId"))
            if kind in ("user", "assistant"):
                if r._add_message(folder, kind, rec):
                    tail.mark_prompt(r, rec)
            elif kind == "system":
                if tail.apply_system(r, rec):
                    # The messages were cut: the folder's places in them are gone too.
                    folder = MessageFolder(r.messages, _uuids=folder._uuids)
                r._keep(rec)
            elif kind in tail.CONTEXT_TYPES:
                tail.apply_context_record(r, rec)
            elif kind == "background-tasks":
                _merge_tasks(tasks, rec)
            elif (apply := _STATE_RECORDS.get(kind)) is not None:
                apply(r, rec)
            elif kind not in KNOWN_TYPES:
                unknown.add(kind)
        r.background_tasks = list(tasks.values())
        r._warn_skipped(folder.duplicates, unknown)
        return r

    def _add_message(self, folder: MessageFolder, kind: str, rec: dict[str, Any]) -> bool:
        """A user or assistant record into the conversation; False when it was skipped
        (malformed, warned; or a repeat the folder counts)."""
        msg = rec.get("message")
        if not isinstance(msg, dict) or not _valid_content(msg.get("content")):
            self.warnings.append(
                f"{self.path.name}: skipped a {kind} record with a malformed message"
            )
            return False
        if not folder.add(kind, rec):
            return False
        self._keep(rec)
        return True

    def _keep(self, rec: dict[str, Any]) -> None:
        """An envelope record of the conversation, now its last."""
        self.records.append(rec)
        self.last_uuid = rec.get("uuid", self.last_uuid)

    def _warn_skipped(self, duplicates: int, unknown: set[str]) -> None:
        name = self.path.name
        if duplicates:
            self.warnings.append(f"{name}: skipped {duplicates} repeated record(s)")
        for kind in sorted(unknown):
            self.warnings.append(f"{name}: skipped records of unknown type {kind!r}")
        if not self.messages:
            self.warnings.append(f"{name}: no readable messages in this session")

    def _apply_mode(self, rec: dict[str, Any]) -> None:
        self.permission_mode = _str_or_none(rec.get("mode")) or self.permission_mode

    def _apply_read_files(self, rec: dict[str, Any]) -> None:
        files = rec.get("files")
        self.read_file_state = (
            [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []
        )

    def _apply_title(self, rec: dict[str, Any]) -> None:
        self.title = rec.get("customTitle") or rec.get("summary") or self.title

    def _apply_rule(self, rec: dict[str, Any]) -> None:
        rule = {"behavior": str(rec.get("behavior", "")), "rule": str(rec.get("rule", ""))}
        if rec.get("action") == "remove":
            self.session_rules = [r for r in self.session_rules if r != rule]
        elif rule not in self.session_rules:
            self.session_rules.append(rule)

    def first_prompt(self) -> str | None:
        """The first thing the user typed (not injected context, not tool results): a title."""
        for rec in self.records:
            if rec["type"] != "user" or rec.get("isMeta") or rec.get("isCompactSummary"):
                continue
            text = prompt_text(rec["message"]["content"])
            if text:
                return text
        return None


# The records that set one piece of the session's state, for ``TranscriptReader.load``.
_STATE_RECORDS = {
    "permission-mode": TranscriptReader._apply_mode,
    "session-rule": TranscriptReader._apply_rule,
    "read-file-state": TranscriptReader._apply_read_files,
    "custom-title": TranscriptReader._apply_title,
    "summary": TranscriptReader._apply_title,
}


def _merge_tasks(tasks: dict[str, dict[str, Any]], rec: dict[str, Any]) -> None:
    """Each ``background-tasks`` record is the list at one moment; a resumed session writes
    only its own tasks, so merge by id (later records win) to keep the earlier runs' tasks."""
    for task in rec.get("tasks") or []:
        if isinstance(task, dict):
            key = str(task.get("task_id") or task.get("id") or len(tasks))
            tasks[key] = task


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _valid_content(content: Any) -> bool:
    if isinstance(content, str):
        return True
    if not isinstance(content, list):
        return False
    # tool blocks must name their ids, or pairing calls with results would fail later
    for b in content:
        if not isinstance(b, dict):
            return False
        kind = b.get("type")
        if kind == "tool_use" and not (isinstance(b.get("id"), str) and b.get("name")):
            return False
        if kind == "tool_result" and not isinstance(b.get("tool_use_id"), str):
            return False
    return True


@datarecord(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    path: Path
    mtime: float
    size: int


def list_sessions(cwd: Path) -> list[SessionInfo]:
    """Sessions of this directory, most recently modified first."""
    pdir = project_dir(cwd)
    if not pdir.is_dir():
        return []
    out = []
    for p in pdir.glob("*.jsonl"):
        try:
            st = p.stat()
        except OSError:
            continue
        out.append(SessionInfo(p.stem, p, st.st_mtime, st.st_size))
    out.sort(key=lambda s: s.mtime, reverse=True)
    return out
