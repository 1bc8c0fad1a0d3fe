"""Checkpoints: the content of each file a turn changes, from before the turn changed it.

Every user prompt starts a turn (``begin_turn`` with the prompt's transcript uuid). The first
time a turn's tools touch a file — Edit, Write, NotebookEdit before they write; a Bash command
that is not read-only by comparing stat scans of the working directories around it
(``fs_snapshot``) — the file's earlier content is saved, content-addressed, in
``<session>/file-history/<sha256>`` (or noted as absent: the turn created it). The transcript
gets a ``file-history-snapshot`` record per saved file, so a resumed session can rewind too.

Rewinding to a prompt restores each file to its state before that prompt's turn: the content
saved by the earliest turn, from that prompt on, that touched the file (turns are kept in the
order they ran, also those a conversation rewind dropped: their saved contents are still the
state before them). A checkpoint that cannot be saved (full disk) is a warning, never a reason
for the tool call to fail; such a file is reported as not restorable.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from agent_cli.loop.fs_snapshot import PreimageCache, Scan, diff_scans, scan
from tools.base import Tool
from tools.context import ToolUseContext
from tools.records import datarecord

__all__ = ["BLOB_DIR", "EDIT_TOOLS", "Backup", "CheckpointStore", "FileChange"]

BLOB_DIR = "file-history"
EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path"}
MAX_BACKUP_BYTES = 64 * 1024 * 1024
_INLINE_BYTES = 256 * 1024  # bigger files are read off the event loop
Record = Callable[[dict[str, Any]], None]
Notify = Callable[[str], None]


@datarecord(frozen=True, slots=True)
class Backup:
    """A file before a turn touched it: ``blob`` names its saved content; None when the file
    did not exist. ``restorable`` is False when its content could not be saved."""

    blob: str | None
    restorable: bool = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"backupFileName": self.blob, "version": 1, "backupTime": _now()}
        if not self.restorable:
            out["restorable"] = False
        return out


@datarecord(frozen=True, slots=True)
class FileChange:
    """What a rewind would do to one file: restore | recreate | delete | unrestorable."""

    path: str
    action: str
    reason: str = ""


@datarecord(slots=True)
class _BashToken:
    before: Scan
    roots: tuple[Path, ...]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CheckpointStore:
    """The session's checkpoints; also the pipeline's ``tools.pipeline.file_watch.FileWatch``."""

    def __init__(
        self,
        blob_dir: Path,
        roots: Callable[[], Sequence[Path]],
        *,
        record: Record | None = None,
        notify: Notify | None = None,
    ) -> None:
        self.blob_dir = blob_dir
        self._roots = roots
        self._record = record
        self._notify = notify
        self._order: list[str] = []
        self._backups: dict[str, dict[str, Backup]] = {}
        self._current: str | None = None
        self._cache = PreimageCache()
        self._warned = False

    # -- turns ---------------------------------------------------------------------------

    def begin_turn(self, message_id: str) -> None:
        self._current = message_id
        if message_id not in self._backups:
            self._order.append(message_id)
            self._backups[message_id] = {}

    def rename_turn(self, old: str, new: str) -> None:
        if old not in self._backups or new in self._backups:
            return
        self._order[self._order.index(old)] = new
        self._backups[new] = self._backups.pop(old)
        if self._current == old:
            self._current = new

    def turns(self) -> list[str]:
        return list(self._order)

    def tracked(self, message_id: str) -> dict[str, Backup]:
        return dict(self._backups.get(message_id, {}))

    def load(self, order: Iterable[str], snapshots: dict[str, dict[str, Any]]) -> None:
        """Rebuild from a transcript: turn ids in the order they ran, and for each the
        ``trackedFileBackups`` recorded for it (merged)."""
        for message_id in order:
            if message_id not in self._backups:
                self._order.append(message_id)
                self._backups[message_id] = {}
            for path, entry in (snapshots.get(message_id) or {}).items():
                if not isinstance(entry, dict) or path in self._backups[message_id]:
                    continue
                blob = entry.get("backupFileName")
                self._backups[message_id][path] = Backup(
                    blob if isinstance(blob, str) else None, entry.get("restorable") is not False
                )

    # -- the pipeline's watcher ----------------------------------------------------------

    async def before_call(
        self,
        tool: Tool[Any],
        parsed: Any,
        tool_input: Callable[[], dict[str, Any]],
        ctx: ToolUseContext,
    ) -> object | None:
        if self._current is None:
            return None
        self._notify = ctx.callbacks.notify  # warnings reach the UI of the running call
        field = EDIT_TOOLS.get(tool.name)
        if field is not None:
            raw = tool_input().get(field)
            if isinstance(raw, str) and raw:
                path = os.path.realpath(os.path.join(str(ctx.cwd), os.path.expanduser(raw)))
                await self._backup_before_edit(path)
            return None
        if tool.name == "Bash" and not tool.is_read_only(parsed):
            roots = tuple(self._roots())
            before = await asyncio.to_thread(self._scan_and_keep, roots)
            return _BashToken(before, roots)
        return None

    async def after_call(self, token: object) -> None:
        if not isinstance(token, _BashToken) or self._current is None:
            return
        after = await asyncio.to_thread(scan, token.roots)
        created, changed, deleted = diff_scans(token.before, after)
        turn = self._backups[self._current]
        new: dict[str, Backup] = {}
        for path in created:
            if path not in turn:
                new[path] = Backup(None)
        for path in (*changed, *deleted):
            if path in turn:
                continue
            data = self._cache.get(path, token.before.files[path])
            new[path] = self._save(path, data) if data is not None else Backup(None, False)
        self._cache.forget([*changed, *deleted])
        self._add(new)

    def _scan_and_keep(self, roots: tuple[Path, ...]) -> Scan:
        before = scan(roots)
        self._cache.fill(before.files)
        return before

    async def _backup_before_edit(self, path: str) -> None:
        assert self._current is not None
        if path in self._backups[self._current]:
            return  # the turn's first touch already saved the state before it
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            self._add({path: Backup(None)})
            return
        except OSError:
            return
        if size > MAX_BACKUP_BYTES:
            self._warn(f"Checkpoint: {path} is too large to save; /rewind cannot restore it.")
            self._add({path: Backup(None, False)})
            return
        if size > _INLINE_BYTES:
            backup = await asyncio.to_thread(self._save_file, path)
        else:
            backup = self._save_file(path)
        if backup is not None:
            self._add({path: backup})

    def _save_file(self, path: str) -> Backup | None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        return self._save(path, data)

    def _save(self, path: str, data: bytes) -> Backup:
        digest = _sha(data)
        target = self.blob_dir / digest
        if target.exists():
            return Backup(digest)
        tmp = target.with_name(f".{digest}.{os.getpid()}.tmp")
        try:
            self.blob_dir.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except OSError as exc:
            try:
                tmp.unlink()
            except OSError:
                pass
            self._warn(
                f"Checkpoint not saved ({exc.strerror or exc}): /rewind will not be able to "
                f"restore {path}. The change itself goes ahead."
            )
            return Backup(None, False)
        return Backup(digest)

    def _add(self, backups: dict[str, Backup]) -> None:
        if not backups or self._current is None:
            return
        self._backups[self._current].update(backups)
        if self._record is None:
            return
        snapshot = {
            "messageId": self._current,
            "trackedFileBackups": {p: b.to_json() for p, b in backups.items()},
            "timestamp": _now(),
        }
        try:
            self._record(
                {"messageId": self._current, "snapshot": snapshot, "isSnapshotUpdate": True}
            )
        except Exception as exc:  # a transcript that cannot be written: the UI says so
            self._warn(f"Checkpoint not recorded in the transcript: {exc}")

    def _warn(self, text: str) -> None:
        if self._notify is not None and not self._warned:
            self._warned = True  # once per session: a full disk would say it on every edit
            try:
                self._notify(text)
            except Exception:
                pass

    # -- rewinding -----------------------------------------------------------------------

    def targets(self, message_id: str) -> dict[str, Backup]:
        """For each file touched from ``message_id``'s turn on: its state before that turn."""
        if message_id not in self._order:
            return {}
        out: dict[str, Backup] = {}
        for turn in self._order[self._order.index(message_id) :]:
            for path, backup in self._backups[turn].items():
                out.setdefault(path, backup)
        return out

    def plan(self, message_id: str) -> list[FileChange]:
        """What restoring the files to before ``message_id`` would change, file by file."""
        changes: list[FileChange] = []
        for path, backup in sorted(self.targets(message_id).items()):
            exists = os.path.lexists(path)
            if not backup.restorable:
                changes.append(
                    FileChange(path, "unrestorable", "its earlier content was not saved")
                )
            elif backup.blob is None:
                if exists:
                    changes.append(FileChange(path, "delete", "created after this point"))
            elif not (self.blob_dir / backup.blob).is_file():
                changes.append(FileChange(path, "unrestorable", "its saved copy is missing"))
            elif not exists:
                changes.append(FileChange(path, "recreate", "deleted after this point"))
            elif _file_sha(path) != backup.blob:
                changes.append(FileChange(path, "restore", "changed after this point"))
        return changes

    def apply(self, message_id: str, changes: Iterable[FileChange]) -> list[str]:
        """Carry out a plan; returns an error line per file that could not be restored."""
        targets = self.targets(message_id)
        errors: list[str] = []
        for change in changes:
            backup = targets.get(change.path)
            try:
                if change.action == "delete":
                    os.unlink(change.path)
                elif change.action in ("restore", "recreate") and backup and backup.blob:
                    data = (self.blob_dir / backup.blob).read_bytes()
                    Path(change.path).parent.mkdir(parents=True, exist_ok=True)
                    # In place, so the file keeps its mode, owner and hard links.
                    with open(change.path, "wb") as fh:
                        fh.write(data)
            except OSError as exc:
                errors.append(f"{change.path}: {exc.strerror or exc}")
        self._cache.forget(c.path for c in changes)
        return errors


def _file_sha(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return _sha(fh.read())
    except OSError:
        return None
