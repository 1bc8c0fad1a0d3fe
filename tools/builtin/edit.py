"""Edit: replace an exact string in a file the model has read, keeping the file's format.

Rules, in order: the path must be absolute; ``old_string`` and ``new_string`` must differ; an
existing file must have been read whole in this conversation and be unchanged since (a changed
mtime with the same content is fine); ``old_string`` must be found (exactly, or forgiving quotes
and trailing blanks, see ``_edit_match``) and be unique unless ``replace_all``. An empty
``old_string`` creates a missing file (or fills an empty one).

The file keeps its encoding (re-detected from its bytes, as Read detected it), BOM, line-ending
style (in a CRLF file the model's ``\\n`` become ``\\r\\n``; a file with mixed endings is edited
as is) and permission bits, and is written atomically.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tools.builtin._edit_match import apply_curly_quotes, find_matches
from tools.builtin._fs import (
    FileSnapshot,
    atomic_write,
    check_writable_state,
    find_missing_file_alternative,
    missing_file_message,
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
from tools.builtin._text import decode_bytes, encode_text, format_line, unified_diff
from tools.context import ToolUseContext
from tools.records import datarecord
from tools.result import ToolResult, ValidationError

__all__ = ["TOOLS", "EditInput", "EditOutput", "edit_tool", "snippet_around"]

MAX_EDIT_BYTES = 256 * 1024 * 1024
SNIPPET_CONTEXT = 4

DESCRIPTION = """Performs exact string replacements in files.

- You must Read the file (whole) in this conversation before editing it; editing a file you
  have not read, or that changed since you read it, fails.
- old_string must match the file's text exactly, without the line-number prefix Read shows
  (the number, then a tab); keep the indentation exactly as it is after that tab.
- The edit fails if old_string is not unique in the file: give more surrounding context to make
  it unique, or set replace_all to replace every occurrence (e.g. to rename a variable).
- An empty old_string creates a new file containing new_string.
- Prefer editing existing files; do not create files unless needed."""


class EditInput(BaseModel):
    """Input of Edit."""

    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The absolute path to the file to modify")
    old_string: str = Field(description="The text to replace")
    new_string: str = Field(
        description="The text to replace it with (must be different from old_string)"
    )
    replace_all: bool = Field(
        default=False, description="Replace all occurrences of old_string (default false)"
    )


class EditOutput(BaseModel):
    """The result of an edit: a message for the model and a unified diff for the TUI."""

    file_path: str
    message: str
    diff: str
    replacements: int
    created: bool = False
    fuzzy: bool = False
    # the text before the edit, for hooks (Claude Code's originalFile); not in transcripts
    original_file: str | None = Field(default=None, exclude=True)


@datarecord(frozen=True, slots=True)
class _Plan:
    path: Path
    before: str
    after: str  # with the file's own line endings
    data: bytes
    mode: int | None
    replacements: int
    created: bool
    fuzzy: bool
    first_line: int
    last_line: int


def snippet_around(text: str, first: int, last: int, context: int = SNIPPET_CONTEXT) -> str:
    """Lines ``first-context .. last+context`` of ``text`` in ``cat -n`` style."""
    lines = text.splitlines()
    lo = max(1, first - context)
    hi = min(len(lines), last + context)
    return "\n".join(format_line(n, lines[n - 1]) for n in range(lo, hi + 1))


@datarecord(frozen=True, slots=True)
class _Replacement:
    after: str
    count: int
    start: int  # offset of the first replacement
    inserted: str  # the text put in (curly quotes kept when the match was fuzzy)
    fuzzy: bool


def _plan(inp: EditInput, ctx: ToolUseContext) -> _Plan | str:
    """Everything an edit does except writing; a string is the error for the model."""
    path = resolve_path(inp.file_path, ctx.cwd)
    reason = special_file_reason(path)
    if reason:
        return reason
    if not path.exists():
        found = _missing_file(path, inp, ctx)
        if not isinstance(found, Path):
            return found
        path = found
    if path.is_dir():
        return f"{path} is a directory, not a file."
    if path.stat().st_size > MAX_EDIT_BYTES:
        return f"{path} is too large to edit ({path.stat().st_size} bytes); use Bash instead."
    snap = snapshot(path)
    if inp.old_string == "" and snap.data.strip():
        return "Cannot create new file - file already exists (old_string is empty)."
    refusal = check_writable_state(path, ctx, snap)
    if refusal:
        return refusal
    return _plan_replacement(path, snap, inp)


def _missing_file(path: Path, inp: EditInput, ctx: ToolUseContext) -> Path | _Plan | str:
    """For a missing file: a near-named one to edit instead, the plan that creates it (empty
    ``old_string``), or the error."""
    alternative = find_missing_file_alternative(path)
    if alternative is not None and inp.old_string:
        return alternative
    if inp.old_string == "":
        data = inp.new_string.encode("utf-8")
        last = max(1, inp.new_string.count("\n") + 1)
        return _Plan(path, "", inp.new_string, data, None, 1, True, False, 1, last)
    return missing_file_message(path, ctx.cwd)


def _plan_replacement(path: Path, snap: FileSnapshot, inp: EditInput) -> _Plan | str:
    """The edit of an existing file's text, in the file's own encoding and line endings."""
    dec = decode_bytes(snap.data)
    work = dec.text.replace("\r\n", "\n") if dec.crlf else dec.text
    old, new = inp.old_string, inp.new_string
    if dec.crlf:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    replaced = _replace(work, old, new, inp)
    if isinstance(replaced, str):
        return replaced
    after = replaced.after
    if after == work:
        return "Original and edited file match exactly. Failed to apply edit."
    first_line = work.count("\n", 0, replaced.start) + 1
    last_line = first_line + replaced.inserted.count("\n")
    out = after.replace("\n", "\r\n") if dec.crlf else after
    data, _ = encode_text(out, dec.encoding, dec.bom)
    return _Plan(
        path=path,
        before=work,
        after=after,
        data=data,
        mode=snap.mode,
        replacements=replaced.count,
        created=False,
        fuzzy=replaced.fuzzy,
        first_line=first_line,
        last_line=last_line,
    )


def _replace(work: str, old: str, new: str, inp: EditInput) -> _Replacement | str:
    """``old`` replaced by ``new`` in ``work`` (``\\n`` line endings), or the error."""
    if old == "":
        return _Replacement(new, 1, 0, new, False)
    match = find_matches(work, old)
    if match is None:
        return (
            f"String to replace not found in file.\nString: {inp.old_string}\n"
            "Read the file again and copy the text exactly (without the line-number "
            "prefix), including its whitespace and indentation."
        )
    count = len(match.spans)
    if count > 1 and not inp.replace_all:
        return (
            f"Found {count} matches of the string to replace, but replace_all is false. "
            "To replace all occurrences, set replace_all to true. To replace only one "
            "occurrence, provide more context to uniquely identify the instance.\n"
            f"String: {inp.old_string}"
        )
    fuzzy = match.how == "fuzzy"
    first_start, first_end = match.spans[0]
    new_text = apply_curly_quotes(new, work[first_start:first_end]) if fuzzy else new
    pieces, pos = [], 0
    for s, e in match.spans:
        pieces += [work[pos:s], new_text]
        pos = e
    pieces.append(work[pos:])
    return _Replacement("".join(pieces), count, first_start, new_text, fuzzy)


def _apply(inp: EditInput, ctx: ToolUseContext) -> tuple[ToolResult, Written | None]:
    plan = _plan(inp, ctx)
    if isinstance(plan, str):
        return ToolResult(data=plan, is_error=True), None
    mtime = atomic_write(plan.path, plan.data, plan.mode)
    diff = unified_diff(str(plan.path), plan.before, plan.after)
    if plan.created:
        message = f"File created successfully at: {plan.path}"
    elif inp.replace_all and plan.replacements > 1:
        message = (
            f"The file {plan.path} has been updated. All {plan.replacements} occurrences of "
            "old_string were replaced with new_string."
        )
    else:
        snippet = snippet_around(plan.after, plan.first_line, plan.last_line)
        message = (
            f"The file {plan.path} has been updated. Here's the result of running `cat -n` on "
            f"a snippet of the edited file:\n{snippet}"
        )
    out = EditOutput(
        file_path=str(plan.path),
        message=message,
        diff=diff,
        replacements=plan.replacements,
        created=plan.created,
        fuzzy=plan.fuzzy,
        original_file=None if plan.created else plan.before,
    )
    return ToolResult(data=out), (plan.path, plan.data, mtime)


def _check(inp: EditInput) -> ValidationError | None:
    if inp.old_string == inp.new_string:
        return ValidationError(
            "No changes to make: old_string and new_string are exactly the same."
        )
    return None


edit_tool = change_tool(
    name="Edit",
    input_model=EditInput,
    description=DESCRIPTION,
    search_hint="modify file replace string",
    change=FileChange(
        field=PathField("file_path"),
        plan=_plan,
        apply=_apply,
        render_plan=lambda plan, _inp: unified_diff(str(plan.path), plan.before, plan.after),
        verb="edit",
        check=_check,
    ),
)

TOOLS = (edit_tool,)
