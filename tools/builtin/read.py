"""Read: a file's text as numbered lines, or an image, a PDF, a notebook, a directory listing.

Read is the one tool whose result is never persisted (``max_result_size_chars=None``): a
persisted result would be Read again, forever. It limits itself instead, by an estimate of
tokens (chars / 4): a whole-file read over budget shows the first part with a PARTIAL notice;
an explicit range over budget is an error asking for a smaller one. Text is streamed, so the
memory a read costs is bounded by what it shows, whatever the file's size.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import ToolKind
from tools.base import ProgressFn, build_tool, default_to_content
from tools.builtin._fs import (
    BINARY_EXTENSIONS,
    find_missing_file_alternative,
    missing_file_message,
    resolve_path,
    special_file_reason,
    state_key,
)
from tools.builtin._path_field import PathField
from tools.builtin._read_formats import (
    MAX_IMAGE_FILE_BYTES,
    image_media_type,
    list_directory,
    parse_pages,
    read_image,
    read_notebook,
    read_pdf,
)
from tools.builtin._read_text import HASH_CAP, MAX_OUTPUT_TOKENS, read_text_page
from tools.context import ReadRecord, ToolUseContext, content_hash
from tools.file_context import file_context_messages
from tools.messages import ResultBlock
from tools.result import ToolResult, ValidationError

__all__ = ["TOOLS", "ReadInput", "ReadOutput", "read_tool"]

MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024
_TOKEN_ENV = ("NERVE_FILE_READ_MAX_OUTPUT_TOKENS", "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS")

DESCRIPTION = """Reads a file from the local filesystem.

- file_path must be an absolute path, not a relative path.
- By default reads up to 2000 lines from the start of the file. For long files pass offset (the
  1-based line to start at) and limit (how many lines); otherwise read the whole file.
- Lines longer than 2000 characters are cut.
- Output is `cat -n` style: line number, a tab, then the line exactly as in the file. Never
  include the line-number prefix in old_string when you edit.
- Reads images (PNG, JPEG, GIF, WebP; shown to you as images), PDFs (text by page; pass pages
  such as "1-5" for PDFs over 10 pages, at most 20 pages per call) and Jupyter notebooks (cells
  with their outputs). A directory gives a listing.
- A whole-file read larger than about 25000 tokens shows only its first part (PARTIAL view);
  read the rest with offset and limit.
- Reading an empty file gives a warning instead of content. Read several files in parallel when
  useful."""


class ReadInput(BaseModel):
    """Input of Read."""

    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The absolute path to the file to read")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from (1-based). Only provide if the "
        "file is too large to read at once",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="The number of lines to read. Only provide if the file is too large to "
        "read at once",
    )
    pages: str | None = Field(
        default=None,
        description='Page range for PDF files (e.g. "1-5" or "3"). Only for PDF files; at '
        "most 20 pages per request",
    )


class ReadOutput(BaseModel):
    """What Read returns: ``content`` goes to the model; the rest is for the UI and tests."""

    kind: Literal["text", "image", "pdf", "notebook", "directory", "notice"]
    file_path: str
    # ``tools.messages.ResultBlock`` dicts; pydantic cannot check a typing.TypedDict on 3.11
    content: str | list[dict[str, Any]]
    start_line: int | None = None
    num_lines: int | None = None
    total_lines: int | None = None
    encoding: str | None = None
    partial: bool = False


def _max_tokens() -> int:
    for name in _TOKEN_ENV:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return MAX_OUTPUT_TOKENS


# What reading gives: the result, and what to record of the file (None: nothing)
_Read = tuple[ToolResult, ReadRecord | None]


def _error(message: str) -> tuple[ToolResult, None]:
    return ToolResult(data=message, is_error=True), None


def _whole(path: Path, data: bytes, mtime_ns: int) -> ReadRecord:
    return ReadRecord(state_key(path), content_hash(data), mtime_ns, False, time.time())


def _read_text(path: Path, inp: ReadInput) -> _Read:
    max_tokens = _max_tokens()
    page = read_text_page(path, inp.offset, inp.limit, max_tokens=max_tokens)
    shown = page.last_line - page.first_line + 1
    if page.range_tokens is not None:
        return _error(
            f"File content ({page.range_tokens} tokens) exceeds maximum allowed tokens "
            f"({max_tokens}). Use offset and limit to read a smaller part."
        )
    partial = page.budget_cut or page.full_hash is None
    record = ReadRecord(state_key(path), page.full_hash or "", page.mtime_ns, partial, time.time())
    out = ReadOutput(
        kind="text",
        file_path=str(path),
        content=page.content,
        start_line=page.first_line,
        num_lines=shown,
        total_lines=page.total_lines,
        encoding=page.encoding,
        partial=partial,
    )
    if page.total_lines == 0:
        out.kind = "notice"
        out.content = (
            "<system-reminder>Warning: the file exists but the contents are empty."
            "</system-reminder>"
        )
        return ToolResult(data=out), record
    if shown == 0:
        out.kind = "notice"
        out.content = (
            "<system-reminder>Warning: the file exists but is shorter than the provided offset "
            f"({page.first_line}). The file has {page.total_lines} lines.</system-reminder>"
        )
        return ToolResult(data=out), None
    if page.budget_cut:
        out.content = (
            f"{page.content}\n\nPARTIAL view: showing lines 1-{page.last_line} of "
            f"{page.total_lines} (file too large for one read; use offset and limit to read more)"
        )
    elif inp.offset is None and inp.limit is None and (page.total_lines or 0) > page.last_line:
        out.content = (
            f"{page.content}\n\n(Showing lines 1-{page.last_line} of {page.total_lines}. "
            "Use offset and limit to read more.)"
        )
    return ToolResult(data=out), record


def _read_sync(path: Path, inp: ReadInput, cwd: Path) -> _Read:
    found = _existing(path, cwd)
    if isinstance(found, str):
        return _error(found)
    path = found
    if path.is_dir():
        text = list_directory(path)
        return ToolResult(
            data=ReadOutput(kind="directory", file_path=str(path), content=text)
        ), None
    reason = special_file_reason(path)
    if reason or not path.is_file():
        return _error(reason or f"Cannot read {path}: not a regular file (a broken symlink?).")
    return _read_file(path, inp)


def _existing(path: Path, cwd: Path) -> Path | str:
    """The path to read (a near-named one when ``path`` is missing), or the error."""
    reason = special_file_reason(path)
    if reason:
        return reason
    if os.path.lexists(path):
        return path
    alternative = find_missing_file_alternative(path)
    return missing_file_message(path, cwd) if alternative is None else alternative


def _read_file(path: Path, inp: ReadInput) -> _Read:
    """A regular file, read as what its first bytes and extension say it is."""
    with open(path, "rb") as f:
        head = f.read(8192)
    st = os.stat(path)
    ext = path.suffix.lower().lstrip(".")
    media = image_media_type(head)
    if media is not None:
        return _read_image_file(path, media, st)
    if ext == "pdf" or head.startswith(b"%PDF-"):
        return _read_pdf_file(path, inp, st)
    if inp.pages is not None:
        return _error(f"The pages parameter is only for PDF files; {path} is not a PDF.")
    if ext == "ipynb":
        return _read_notebook_file(path, st)
    utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
    if ext in BINARY_EXTENSIONS or (b"\0" in head and not utf16):
        return _error(
            f"Cannot read {path}: it appears to be a binary file. Read shows text files, "
            "images (PNG, JPEG, GIF, WebP), PDFs and Jupyter notebooks."
        )
    return _read_text(path, inp)


def _read_image_file(path: Path, media: str, st: os.stat_result) -> _Read:
    if st.st_size > MAX_IMAGE_FILE_BYTES:
        return _error(f"Image {path} is too large to read ({st.st_size} bytes).")
    data = path.read_bytes()
    image = read_image(data, media)
    note = (
        f"Image {path} ({image.original_size[0]}x{image.original_size[1]})"
        if (image.original_size)
        else f"Image {path}"
    )
    if image.downscaled and image.sent_size:
        note += f", downscaled to {image.sent_size[0]}x{image.sent_size[1]}"
    blocks: list[ResultBlock] = [image.block, {"type": "text", "text": note}]
    out = ReadOutput(kind="image", file_path=str(path), content=_plain(blocks))
    return ToolResult(data=out), _whole(path, data, st.st_mtime_ns)


def _read_pdf_file(path: Path, inp: ReadInput, st: os.stat_result) -> _Read:
    text, is_error = read_pdf(path, inp.pages)
    if is_error:
        return _error(text)
    record = None
    if st.st_size <= HASH_CAP:
        record = _whole(path, path.read_bytes(), st.st_mtime_ns)
    return ToolResult(data=ReadOutput(kind="pdf", file_path=str(path), content=text)), record


def _read_notebook_file(path: Path, st: os.stat_result) -> _Read:
    if st.st_size > MAX_NOTEBOOK_BYTES:
        return _error(f"Notebook {path} is too large to read ({st.st_size} bytes).")
    data = path.read_bytes()
    try:
        cells = read_notebook(data)
    except Exception as exc:  # any malformed notebook is the model's error
        return _error(f"Could not parse notebook {path}: {type(exc).__name__}: {exc}")
    out = ReadOutput(kind="notebook", file_path=str(path), content=_plain(cells))
    return ToolResult(data=out), _whole(path, data, st.st_mtime_ns)


async def _call(inp: ReadInput, ctx: ToolUseContext, progress: ProgressFn) -> ToolResult:
    path = resolve_path(inp.file_path, ctx.cwd)
    try:
        result, record = await asyncio.to_thread(_read_sync, path, inp, ctx.cwd)
    except PermissionError:
        return ToolResult(data=f"Permission denied: cannot read {path}.", is_error=True)
    except OSError as exc:
        return ToolResult(data=f"Cannot read {path}: {exc.strerror or exc}.", is_error=True)
    if record is not None:
        previous = ctx.state.read_files.get(record.path)
        # A partial look after a whole read of the same, unchanged file loses nothing.
        keep = (
            record.partial
            and previous is not None
            and not previous.partial
            and previous.mtime_ns == record.mtime_ns
        )
        if not keep:
            ctx.state.read_files.record(record)
    if not result.is_error:
        result.new_messages += file_context_messages(path, ctx)  # e.g. path-scoped rules
    return result


_FILE = PathField("file_path")


def _validate(inp: ReadInput, _ctx: ToolUseContext) -> ValidationError | None:
    if (error := _FILE.check(inp)) is not None:
        return error
    if inp.pages is not None:
        parsed = parse_pages(inp.pages)
        if isinstance(parsed, str):
            return ValidationError(parsed)
    return None


def _render_call(inp: ReadInput) -> str:
    if inp.pages:
        return f"{inp.file_path} · pages {inp.pages}"
    if inp.offset is not None or inp.limit is not None:
        start = max(inp.offset or 1, 1)
        end = f"{start + inp.limit - 1}" if inp.limit else ""
        return f"{inp.file_path} · lines {start}-{end}"
    return inp.file_path


def _render_result(data: Any) -> str:
    if isinstance(data, ReadOutput):
        if data.kind == "text":
            return f"Read {data.num_lines} lines" + (" (partial)" if data.partial else "")
        return f"Read {data.kind}"
    return str(data)


def _plain(blocks: list[ResultBlock]) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", blocks)


def _to_content(data: Any) -> str | list[ResultBlock]:
    if isinstance(data, ReadOutput):
        return cast("str | list[ResultBlock]", data.content)
    return default_to_content(data)


read_tool = build_tool(
    name="Read",
    input_model=ReadInput,
    call=_call,
    description=DESCRIPTION,
    search_hint="read file contents lines image pdf notebook",
    is_read_only=True,
    is_concurrency_safe=True,
    max_result_size_chars=None,
    validate_input=_validate,
    permission_kind=ToolKind.READ,
    permission_paths=_FILE.paths,
    backfill_input=_FILE.backfill,
    to_content=_to_content,
    render_call=_render_call,
    render_result=_render_result,
)

TOOLS = (read_tool,)
