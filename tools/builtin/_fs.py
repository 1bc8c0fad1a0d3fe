"""Filesystem helpers shared by the file tools: paths, unsafe files, read state, atomic writes.

Every file tool resolves its path with :func:`resolve_path` (``~`` expanded, relative paths
joined to the context's cwd, normalised, symlinks *not* resolved: the permission engine judges
the path as written and deals with symlinks itself). The read-file state is keyed by
:func:`state_key` (the real path), so a read through a symlink counts for an edit of its target.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from permissions.paths import first_matching_path_rule
from permissions.types import RuleBehavior
from tools.context import ReadFileState, ReadRecord, ToolUseContext, content_hash
from tools.records import datarecord

__all__ = [
    "BINARY_EXTENSIONS",
    "NOT_READ_MESSAGE",
    "STALE_MESSAGE",
    "FileSnapshot",
    "atomic_write",
    "check_writable_state",
    "find_missing_file_alternative",
    "hidden_by_read_rules",
    "is_absolute_input",
    "missing_file_message",
    "record_whole_file",
    "resolve_path",
    "snapshot",
    "special_file_reason",
    "state_key",
]

NOT_READ_MESSAGE = "File has not been read yet. Read it first before writing to it."
STALE_MESSAGE = (
    "File has been modified since read, either by the user or by a linter. "
    "Read it again before attempting to write it."
)

# Extensions whose content is never text (images, PDFs and notebooks are handled by Read).
BINARY_EXTENSIONS = frozenset(
    """
    exe dll so dylib o a lib obj class jar war pyc pyo pyd whl egg zip gz tgz bz2 xz zst lz4 7z rar
    tar iso dmg img bin mp3 mp4 m4a m4v mov avi mkv webm wav flac ogg oga opus aac wma wmv
    woff woff2 ttf otf eot psd ai bmp ico icns tif tiff heic avif sqlite sqlite3 db parquet
    xls xlsx doc docx ppt pptx odt ods odp deb rpm apk ipa msi wasm node
    """.split()
)

# Paths that never end or block when read. Checked by name first (``/dev/stdin`` is a symlink
# to whatever fd 0 is), then by ``os.stat`` — which never opens the file, so a FIFO cannot block.
_BLOCKED_PATHS = frozenset(
    {
        "/dev/zero",
        "/dev/random",
        "/dev/urandom",
        "/dev/full",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "/dev/console",
        "/dev/fd/0",
        "/dev/fd/1",
        "/dev/fd/2",
        "/proc/kmsg",
    }
)
_PROC_FD = re.compile(r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/")


def is_absolute_input(raw: str) -> bool:
    """True for an absolute path or one starting with ``~`` (expanded by backfill)."""
    return os.path.isabs(raw) or raw == "~" or raw.startswith("~/")


def resolve_path(raw: str, cwd: Path) -> Path:
    """The absolute, normalised form of a path from the model (``~`` expanded, no symlinks)."""
    expanded = os.path.expanduser(raw)
    if not os.path.isabs(expanded):
        expanded = os.path.join(str(cwd), expanded)
    return Path(os.path.normpath(expanded))


def state_key(path: Path) -> Path:
    """The key of a file in the read-file state: its real path."""
    return Path(os.path.realpath(path))


def special_file_reason(path: Path) -> str | None:
    """Why reading ``path`` could hang or never end, or None. Never opens the file."""
    text = str(path)
    if text in _BLOCKED_PATHS or _PROC_FD.match(text):
        return f"Cannot read {text}: it is a device or stream that never ends or blocks."
    try:
        st = os.stat(path)
    except OSError:
        return None
    mode = st.st_mode
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return f"Cannot read {text}: it is {what}, not a regular file."
    return None


_NNBSP = "\u202f"


def find_missing_file_alternative(path: Path) -> Path | None:
    """An existing variant of a missing path with spaces <-> U+202F swapped (macOS screenshots)."""
    name = path.name
    variants = [
        name.replace(" ", _NNBSP),
        name.replace(_NNBSP, " "),
        re.sub(r" (AM|PM)\b", _NNBSP + r"\1", name),
    ]
    for variant in variants:
        if variant != name:
            candidate = path.with_name(variant)
            if candidate.exists():
                return candidate
    return None


def missing_file_message(path: Path, cwd: Path) -> str:
    """'File does not exist' with the cwd and close names in the same directory."""
    msg = f"File does not exist: {path}. Current working directory: {cwd}."
    parent = path.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return msg + f" (Directory {parent} does not exist either.)"
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    if not close:
        lowered = {n.lower(): n for n in names}
        close = [lowered[n] for n in difflib.get_close_matches(path.name.lower(), lowered, n=3)]
    if close:
        msg += " Did you mean " + " or ".join(str(parent / n) for n in close) + "?"
    return msg


@datarecord(frozen=True, slots=True)
class FileSnapshot:
    """The bytes of a file with the stat data taken before they were read."""

    data: bytes
    mtime_ns: int
    mode: int


def snapshot(path: Path) -> FileSnapshot:
    """Stat then read a whole (regular) file."""
    st = os.stat(path)
    with open(path, "rb") as f:
        data = f.read()
    return FileSnapshot(data=data, mtime_ns=st.st_mtime_ns, mode=stat.S_IMODE(st.st_mode))


def check_writable_state(path: Path, ctx: ToolUseContext, current: FileSnapshot) -> str | None:
    """Why an existing file may not be overwritten now (not read whole, or changed), or None.

    A changed mtime alone is not enough to refuse (``touch``, a formatter that changed nothing):
    the content hash must differ too. A record without a hash can only be trusted by mtime.
    """
    rec = ctx.state.read_files.get(state_key(path))
    if rec is None:
        return NOT_READ_MESSAGE
    if rec.partial:
        return (
            NOT_READ_MESSAGE + " (Only a partial view of it was read; read it again with "
            "offset and limit before writing.)"
        )
    if rec.mtime_ns == current.mtime_ns:
        return None
    if rec.content_hash and rec.content_hash == content_hash(current.data):
        return None
    return STALE_MESSAGE


def record_whole_file(state: ReadFileState, path: Path, data: bytes, mtime_ns: int) -> None:
    """Remember that the model has seen (or written) the whole of ``path``."""
    state.record(
        ReadRecord(
            path=state_key(path),
            content_hash=content_hash(data),
            mtime_ns=mtime_ns,
            partial=False,
            timestamp=time.time(),
        )
    )


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> int:
    """Write ``data`` to ``path``, atomically when that keeps the file what it was.

    The usual way is a temp file in the same dir, fsync, rename. A symlink is followed so the
    link stays a link and its target is updated. ``mode`` keeps an existing file's permission
    bits (read-only ones too); new files get the umask default; the group is kept when it can
    be. Returns the new mtime_ns.

    A rename would make a different file, so the file is rewritten in place instead (not
    atomic, but the only way to honour the request) when it has other hard links (they would
    keep the old content), when it belongs to another user (the new file would be ours), when
    its group cannot be given to the new file, or when the directory refuses a temp file.
    """
    target = Path(os.path.realpath(path))
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and (st.st_nlink > 1 or st.st_uid != os.geteuid()):
        return _write_in_place(target, data)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except PermissionError:
        return _write_in_place(target, data)
    try:
        if st is not None and os.fstat(fd).st_gid != st.st_gid:
            try:
                os.fchown(fd, -1, st.st_gid)
            except PermissionError:
                os.close(fd)
                os.unlink(tmp)
                return _write_in_place(target, data)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return os.stat(target).st_mtime_ns


def _write_in_place(target: Path, data: bytes) -> int:
    """Overwrite the file itself (same inode: links, owner, mode and xattrs stay). The old bytes
    are overwritten before the file is cut to length, so it is never seen empty."""
    fd = os.open(target, os.O_WRONLY)
    try:
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.pwrite(fd, view[written:], written)
        os.ftruncate(fd, len(view))
        os.fsync(fd)
    finally:
        os.close(fd)
    return os.stat(target).st_mtime_ns


def hidden_by_read_rules(ctx: ToolUseContext) -> Callable[[str], bool] | None:
    """A filter for search results (Grep, Glob): True for a file a ``Read`` deny or ask rule
    covers, or None when no such rule exists.

    The engine judges only the directory a search starts from, so a ``Read(./.env)`` deny would
    not stop ``Grep`` over the project from printing ``.env``: the results are filtered here
    instead (symlinks both ways, as for Read). Ask rules hide too: a search cannot prompt per file.
    """
    perm = ctx.permissions
    rules = [
        r
        for r in perm.rules
        if r.behavior in (RuleBehavior.DENY, RuleBehavior.ASK)
        and r.value.tool_name == "Read"
        and r.value.content is not None
    ]
    if not rules:
        return None
    cache: dict[str, bool] = {}

    def hidden(path: str) -> bool:
        """``path`` is absolute or relative to the context's cwd."""
        found = cache.get(path)
        if found is None:
            found = first_matching_path_rule(rules, path, perm) is not None
            cache[path] = found
        return found

    return hidden
