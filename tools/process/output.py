"""Collect a command's output with bounded memory: head and tail in memory, the rest spooled.

Every chunk is counted, written to a spool file (created lazily once the output outgrows
``INLINE_BYTES``; capped at ``SPOOL_CAP_BYTES``, after which we keep draining but stop writing),
and folded into a bounded head (first ``HEAD_BYTES``) and tail (last ``TAIL_BYTES``). So
``seq 1 50000000`` costs a few hundred KB of memory, not half a gigabyte.

The collector also keeps the last few lines for progress events, throttled to one event per
``PROGRESS_INTERVAL_S`` (a deferred event makes sure the latest state is always shown, and
``finish`` always emits the final state).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tools.records import datarecord

__all__ = [
    "HEAD_BYTES",
    "INLINE_BYTES",
    "SPOOL_CAP_BYTES",
    "BashProgress",
    "OutputCollector",
    "clean_text",
    "new_spool_path",
    "spool_dir",
]

INLINE_BYTES = 256 * 1024  # below this nothing touches the disk
HEAD_BYTES = 128 * 1024
TAIL_BYTES = 64 * 1024
SPOOL_CAP_BYTES = 64 * 1024 * 1024
PROGRESS_INTERVAL_S = 0.05
PROGRESS_LINES = 5
_PARTIAL_CAP = 4096  # a progress line longer than this is cut (display only)


@datarecord(frozen=True, slots=True)
class BashProgress:
    """A live view of a running command: line count, the last lines, bytes so far."""

    lines_so_far: int
    last_lines: tuple[str, ...]
    bytes: int
    elapsed_s: float = 0.0
    tool: str = "Bash"  # whose renderer shows it (``Tool.render_progress``)


def clean_text(data: bytes | str) -> str:
    """Decode as UTF-8 (invalid bytes replaced) and resolve carriage-return overwrites.

    ``50%\\r100%\\n`` becomes ``100%\\n`` (what a terminal would show); ``\\r\\n`` is a newline.
    """
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    if "\r" not in text:
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    for i, line in enumerate(lines):
        if "\r" in line:
            segments = [s for s in line.split("\r") if s]
            lines[i] = segments[-1] if segments else ""
    return "\n".join(lines)


def spool_dir(session_dir: Path | None, name: str) -> Path:
    """``<session_dir>/<name>`` or a per-user temp dir when there is no session dir."""
    base = session_dir if session_dir is not None else Path(tempfile.gettempdir())
    sub = name if session_dir is not None else f"nerve-{name}-{os.getuid()}"
    path = base / sub
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


class OutputCollector:
    """Receives raw chunks (``feed``) and keeps a bounded view of them (see module docstring)."""

    def __init__(
        self,
        *,
        spool_path_factory: Callable[[], Path],
        on_progress: Callable[[BashProgress], None] | None = None,
    ) -> None:
        self._spool_path_factory = spool_path_factory
        self._on_progress = on_progress
        self.total_bytes = 0
        self.total_lines = 0  # newline count
        self._mem = bytearray()  # everything, while total <= INLINE_BYTES
        self._head = bytearray()
        self._tail = bytearray()
        self._spooled = False
        self._spool: IO[bytes] | None = None
        self.spool_path: Path | None = None
        self.spool_bytes = 0
        self.spool_cut = False
        self._recent: deque[bytes] = deque(maxlen=PROGRESS_LINES)
        self._partial = bytearray()
        self._started = time.monotonic()
        self._last_emit = 0.0
        self._emitted_bytes = 0
        self._timer: asyncio.TimerHandle | None = None

    # -- intake -------------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        nl = chunk.count(b"\n")
        self.total_lines += nl
        if not self._spooled:
            self._mem += chunk
            if len(self._mem) > INLINE_BYTES:
                self._start_spool()
        else:
            self._write_spool(chunk)
            self._tail += chunk
            if len(self._tail) > TAIL_BYTES:
                del self._tail[: len(self._tail) - TAIL_BYTES]
        if self._on_progress is not None:
            self._track_lines(chunk, nl)
            self._maybe_emit()

    def _start_spool(self) -> None:
        data = bytes(self._mem)
        self._mem = bytearray()
        self._head = bytearray(data[:HEAD_BYTES])
        self._tail = bytearray(data[-TAIL_BYTES:])
        self._spooled = True
        self._write_spool(data)

    def _open_spool(self) -> IO[bytes] | None:
        if self._spool is None and self.spool_path is None:
            try:
                path = self._spool_path_factory()
                self._spool = open(path, "wb")
                self.spool_path = path
            except OSError:
                self.spool_cut = True  # nowhere to write: keep the bounded view only
        return self._spool

    def _write_spool(self, data: bytes) -> None:
        if self.spool_cut:
            return
        fh = self._open_spool()
        if fh is None:
            return
        room = SPOOL_CAP_BYTES - self.spool_bytes
        piece = data if len(data) <= room else data[:room]
        try:
            fh.write(piece)
        except OSError:
            self.spool_cut = True
            return
        self.spool_bytes += len(piece)
        if len(piece) < len(data):
            self.spool_cut = True

    def _track_lines(self, chunk: bytes, nl: int) -> None:
        if nl == 0:
            if len(self._partial) < _PARTIAL_CAP:
                self._partial += chunk[: _PARTIAL_CAP - len(self._partial)]
            return
        pieces = chunk.rsplit(b"\n", PROGRESS_LINES)
        first = pieces[0]
        if nl <= PROGRESS_LINES:
            first = bytes(self._partial) + first
        else:
            first = first.rsplit(b"\n", 1)[-1]
        self._recent.extend([first[:_PARTIAL_CAP], *(p[:_PARTIAL_CAP] for p in pieces[1:-1])])
        self._partial = bytearray(pieces[-1][:_PARTIAL_CAP])

    # -- progress -----------------------------------------------------------------------------

    def snapshot(self) -> BashProgress:
        lines = [*self._recent]
        if self._partial:
            lines.append(bytes(self._partial))
        shown = tuple(clean_text(b).rstrip("\n") for b in lines[-PROGRESS_LINES:])
        partial = 1 if self._partial else 0
        return BashProgress(
            lines_so_far=self.total_lines + partial,
            last_lines=shown,
            bytes=self.total_bytes,
            elapsed_s=time.monotonic() - self._started,
        )

    def _emit(self) -> None:
        self._timer = None
        if self._on_progress is None or self._emitted_bytes == self.total_bytes:
            return
        self._last_emit = time.monotonic()
        self._emitted_bytes = self.total_bytes
        self._on_progress(self.snapshot())

    def _maybe_emit(self) -> None:
        wait = self._last_emit + PROGRESS_INTERVAL_S - time.monotonic()
        if wait <= 0:
            if self._timer is not None:
                self._timer.cancel()
            self._emit()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._timer = loop.call_later(wait, self._emit)

    def finish(self) -> None:
        """Flush the spool and emit the final progress state (never dropped)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._spool is not None:
            try:
                self._spool.flush()
            except OSError:
                self.spool_cut = True
        self._emit()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._spool is not None:
            self._spool.close()
            self._spool = None

    # -- read-back ----------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """True when every byte is in memory (no head/tail cut)."""
        return not self._spooled

    def all_bytes(self) -> bytes:
        """Every byte (only valid when ``complete``)."""
        return bytes(self._mem)

    def head_bytes(self) -> bytes:
        return bytes(self._mem[:HEAD_BYTES]) if not self._spooled else bytes(self._head)

    def tail_bytes(self) -> bytes:
        return bytes(self._mem[-TAIL_BYTES:]) if not self._spooled else bytes(self._tail)

    def ensure_spool(self) -> Path | None:
        """Make sure the whole output (as far as kept) is on disk; return its path."""
        if not self._spooled:
            self._spooled = True
            data = bytes(self._mem)
            self._head = bytearray(data[:HEAD_BYTES])
            self._tail = bytearray(data[-TAIL_BYTES:])
            self._write_spool(data)
            if self._spool is not None:
                self._spool.flush()
        return self.spool_path

    def read_prefix(self, limit: int) -> bytes | None:
        """The first ``limit`` bytes of the output, or None when they were not kept."""
        if not self._spooled:
            return bytes(self._mem[:limit])
        if self.spool_path is None or self.spool_bytes < min(limit, self.total_bytes):
            return None
        with open(self.spool_path, "rb") as fh:
            return fh.read(limit)


def new_spool_path(directory: Path, prefix: str = "") -> Path:
    """A fresh, unguessable file name under ``directory``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return directory / f"{prefix}{stamp}-{secrets.token_hex(4)}.log"
