"""Write: create a file, or overwrite one the model has read whole and that is unchanged since.

The content is written as given: its line endings are not converted (as Claude Code does; a
model that rewrites a CRLF file sends what it wants). An existing file keeps its encoding and
BOM when the new content can be encoded in it (else UTF-8) and its permission bits. Parent
directories are created; the write is atomic (temp file + fsync + rename).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tools.builtin._fs import (
    atomic_write,
    check_writable_state,
    resolve_path,
    snapshot,
    special_file_reason,
)
from tools.builtin._path_field import (
    FileChange,
    PathField,
    Written,
    change_tool,
)
from tools.builtin._text import decode_bytes, encode_text, unified_diff
from tools.context import ToolUseContext
from tools.records import datarecord
from tools.result import ToolResult

__all__ = ["TOOLS", "WriteInput", "WriteOutput", "write_tool"]

PREVIEW_LINES = 40

DESCRIPTION = """Writes a file to the local filesystem, replacing it if it exists.

- file_path must be absolute.
- Overwriting an existing file requires that you Read it (whole) first in this conversation;
  otherwise the write fails.
- Prefer Edit for changes to existing files: it sends only the difference.
- Do not create documentation or README files unless asked."""


class WriteInput(BaseModel):
    """Input of Write."""

    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(
        description="The absolute path to the file to write (must be absolute, not relative)"
    )
    content: str = Field(description="The content to write to the file")


class WriteOutput(BaseModel):
    """The result of a write: a message for the model and a unified diff for the TUI."""

    file_path: str
    kind: str  # "create" | "update"
    message: str
    diff: str
    # the text before the write (None: a new file), for hooks; not in transcripts
    original_file: str | None = Field(default=None, exclude=True)


@datarecord(frozen=True, slots=True)
class _Plan:
    path: Path
    before: str | None  # None: the file is new
    data: bytes
    mode: int | None


def _plan(inp: WriteInput, ctx: ToolUseContext) -> _Plan | str:
    path = resolve_path(inp.file_path, ctx.cwd)
    reason = special_file_reason(path)
    if reason:
        return reason
    if path.is_dir():
        return f"{path} is a directory; give the path of a file."
    if not path.exists():
        return _Plan(path, None, inp.content.encode("utf-8"), None)
    snap = snapshot(path)
    refusal = check_writable_state(path, ctx, snap)
    if refusal:
        return refusal
    dec = decode_bytes(snap.data)
    data, _ = encode_text(inp.content, dec.encoding, dec.bom)
    return _Plan(path, dec.text, data, snap.mode)


def _apply(inp: WriteInput, ctx: ToolUseContext) -> tuple[ToolResult, Written | None]:
    plan = _plan(inp, ctx)
    if isinstance(plan, str):
        return ToolResult(data=plan, is_error=True), None
    mtime = atomic_write(plan.path, plan.data, plan.mode)
    if plan.before is None:
        kind, message = "create", f"File created successfully at: {plan.path}"
    else:
        kind, message = "update", f"The file {plan.path} has been updated."
    diff = unified_diff(str(plan.path), plan.before or "", inp.content)
    out = WriteOutput(
        file_path=str(plan.path), kind=kind, message=message, diff=diff, original_file=plan.before
    )
    return ToolResult(data=out), (plan.path, plan.data, mtime)


def _render_plan(plan: _Plan, inp: WriteInput) -> str:
    if plan.before is not None:
        return unified_diff(str(plan.path), plan.before, inp.content)
    lines = inp.content.splitlines()
    head = "\n".join(lines[:PREVIEW_LINES])
    more = f"\n… ({len(lines) - PREVIEW_LINES} more lines)" if len(lines) > PREVIEW_LINES else ""
    return f"New file {plan.path}:\n{head}{more}"


write_tool = change_tool(
    name="Write",
    input_model=WriteInput,
    description=DESCRIPTION,
    search_hint="create or overwrite a file",
    change=FileChange(
        field=PathField("file_path"),
        plan=_plan,
        apply=_apply,
        render_plan=_render_plan,
        verb="write",
    ),
)

TOOLS = (write_tool,)
