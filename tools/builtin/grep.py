"""Grep: ripgrep over the workspace, in three output modes, paged with head_limit/offset.

ripgrep's defaults stay (``.gitignore`` respected); hidden files are searched and
version-control directories always excluded. Results are put in a stable order before paging —
files by mtime (newest first) for ``files_with_matches``, by path for ``content`` and ``count``
— so page 2 of a search continues page 1 even though ripgrep itself searches in parallel. In
content mode paths end with NUL (``--null``), so a path with ``:`` in it cannot confuse the
parser (rg's ``--json`` would too, but parsing it costs 3x rg's own time on 20k hits); lines
longer than 500 chars are replaced by rg's "[Omitted long line ...]" (``--max-columns 500``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import ToolKind
from tools.base import ProgressFn, build_tool
from tools.builtin._fs import hidden_by_read_rules, resolve_path, special_file_reason
from tools.builtin._grep_format import MAX_COLUMNS, format_content, split_globs
from tools.builtin._path_field import PathField
from tools.builtin._rg import find_rg, run_rg, vcs_excludes
from tools.context import ToolUseContext
from tools.result import ToolResult, ValidationError

__all__ = ["DEFAULT_HEAD_LIMIT", "TOOLS", "GrepInput", "grep_tool"]

DEFAULT_HEAD_LIMIT = 250

DESCRIPTION = """A powerful search tool built on ripgrep.

- ALWAYS use Grep for search tasks; never run `grep` or `rg` through Bash.
- Full regex syntax (e.g. "log.*Error", "function\\s+\\w+"); literal braces need escaping
  (use `interface\\{\\}` to find `interface{}` in Go code).
- Filter files with glob (e.g. "*.js", "**/*.tsx") or type (e.g. "js", "py", "rust").
- output_mode: "content" shows matching lines, "files_with_matches" (default) only file
  paths, "count" match counts per file.
- Patterns match within single lines by default; set multiline: true for patterns that span
  lines (e.g. `struct \\{[\\s\\S]*?field`).
- Results are limited to head_limit entries (default 250); page with offset."""


class GrepInput(BaseModel):
    """Input of Grep (the short flags keep ripgrep's names, as the model knows them)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="The regular expression pattern to search for")
    path: str | None = Field(
        default=None,
        description="File or directory to search in. Defaults to the current working directory.",
    )
    glob: str | None = Field(
        default=None,
        description='Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - rg --glob',
    )
    output_mode: Literal["content", "files_with_matches", "count"] | None = Field(
        default=None,
        description='"content" shows matching lines (supports -A/-B/-C, -n, head_limit), '
        '"files_with_matches" shows file paths (default), "count" shows match counts',
    )
    before: int | None = Field(
        default=None, ge=0, alias="-B", description="Lines to show before each match"
    )
    after: int | None = Field(
        default=None, ge=0, alias="-A", description="Lines to show after each match"
    )
    context_c: int | None = Field(
        default=None, ge=0, alias="-C", description="Lines to show before and after each match"
    )
    context: int | None = Field(default=None, ge=0, description="Alias for -C")
    line_numbers: bool | None = Field(
        default=None, alias="-n", description="Show line numbers (content mode; default true)"
    )
    case_insensitive: bool | None = Field(
        default=None, alias="-i", description="Case insensitive search (rg -i)"
    )
    only_matching: bool | None = Field(
        default=None, alias="-o", description="Show only the matched parts (content mode)"
    )
    type: str | None = Field(
        default=None, description="File type to search (rg --type), e.g. js, py, rust, go"
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description="Limit output to the first N lines/entries (default 250; 0 = unlimited)",
    )
    offset: int | None = Field(
        default=None, ge=0, description="Skip the first N lines/entries before head_limit"
    )
    multiline: bool | None = Field(
        default=None,
        description="Let . match newlines and patterns span lines (rg -U --multiline-dotall)",
    )


def _context_args(inp: GrepInput) -> list[str]:
    both = inp.context if inp.context is not None else inp.context_c
    if both is not None:
        return ["-C", str(both)]
    args: list[str] = []
    if inp.before is not None:
        args += ["-B", str(inp.before)]
    if inp.after is not None:
        args += ["-A", str(inp.after)]
    return args


def _build_args(inp: GrepInput, mode: str, target: str) -> list[str]:
    args = ["--hidden", *vcs_excludes()]
    if inp.case_insensitive:
        args.append("-i")
    if inp.multiline:
        args += ["-U", "--multiline-dotall"]
    if inp.type:
        args += ["--type", inp.type]
    for glob in split_globs(inp.glob or ""):
        args += ["--glob", glob]
    if mode == "files_with_matches":
        args.append("-l")
    elif mode == "count":
        args += ["-c", "--with-filename"]
    else:
        args += ["-n", "-H", "--null", "--max-columns", str(MAX_COLUMNS), *_context_args(inp)]
        if inp.only_matching:
            args.append("-o")
    # -e keeps a pattern that starts with "-" from being read as a flag.
    return [*args, "-e", inp.pattern, "--", target]


def _page(items: list[str], inp: GrepInput) -> tuple[list[str], str]:
    limit = DEFAULT_HEAD_LIMIT if inp.head_limit is None else inp.head_limit
    skip = inp.offset or 0
    rest = items[skip:]
    page = rest if limit == 0 else rest[:limit]
    cut = limit != 0 and len(rest) > limit
    if cut or skip:
        shown_limit = limit if limit else "none"
        return page, f"[Showing results with pagination = limit: {shown_limit}, offset: {skip}]"
    return page, ""


def _clean(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _drop_hidden_lines(stdout: bytes, run_cwd: Path, hidden: Callable[[str], bool]) -> bytes:
    """Content-mode output without the lines of hidden files (each line is ``path NUL …``)."""
    kept = []
    for line in stdout.split(b"\n"):
        path, nul, _ = line.partition(b"\0")
        if nul and hidden(os.path.join(run_cwd, path.decode("utf-8", "replace"))):
            continue
        kept.append(line)
    return b"\n".join(kept)


def _by_mtime(run_cwd: Path, paths: list[str]) -> list[str]:
    keyed = []
    for p in paths:
        try:
            mtime = os.stat(os.path.join(run_cwd, p)).st_mtime_ns
        except OSError:
            mtime = 0
        keyed.append((-mtime, p))
    keyed.sort()
    return [p for _, p in keyed]


async def _call(inp: GrepInput, ctx: ToolUseContext, progress: ProgressFn) -> ToolResult:
    target = resolve_path(inp.path, ctx.cwd) if inp.path else ctx.cwd
    refusal = _refusal(target)
    if refusal is not None:
        return ToolResult(data=refusal, is_error=True)
    run_cwd = ctx.cwd if ctx.cwd.is_dir() else (target if target.is_dir() else target.parent)
    mode = inp.output_mode or "files_with_matches"
    args = _build_args(inp, mode, _target_arg(target, run_cwd))
    run = await run_rg(args, run_cwd, ctx.abort, _progress_counter(mode, progress))
    if run.aborted:
        return ToolResult(data="Grep was interrupted.", is_error=True)
    stderr = run.stderr.strip()
    if run.returncode == 2 and not run.stdout:
        return ToolResult(data=f"ripgrep error: {stderr or 'exit status 2'}", is_error=True)
    found = _FOUND[mode](run.stdout, inp, run_cwd, hidden_by_read_rules(ctx))
    text = _text(mode, found, inp)
    if run.truncated:
        text += "\n\n(ripgrep output exceeded 256 MiB and was cut; narrow the search.)"
    if run.returncode == 2 and stderr:
        text += f"\n\n(ripgrep reported errors: {stderr.splitlines()[0]})"
    return ToolResult(data=text)


def _refusal(target: Path) -> str | None:
    """Why the search cannot run on ``target``, or None."""
    if not target.exists():
        return f"Path does not exist: {target}"
    if not target.is_dir() and (reason := special_file_reason(target)) is not None:
        return reason  # rg would block opening a FIFO
    if find_rg() is None:
        return "Grep needs ripgrep (rg), which is not installed."
    return None


def _target_arg(target: Path, run_cwd: Path) -> str:
    """``target`` as rg is given it: relative to where rg runs when it is under it."""
    try:
        rel = target.relative_to(run_cwd)
    except ValueError:
        return str(target)
    return "." if str(rel) == "." else str(rel)


def _progress_counter(mode: str, progress: ProgressFn) -> Callable[[bytes], None]:
    """Reports the lines (content mode) or files found so far as rg's output arrives."""
    seen = 0
    marker = b"\0" if mode == "content" else b"\n"

    def on_chunk(chunk: bytes) -> None:
        nonlocal seen
        seen += chunk.count(marker)
        progress({"tool": "Grep", "lines" if mode == "content" else "files": seen})

    return on_chunk


# What a search found, in page order, and its summary line ("" when there is none).
_Found = tuple[list[str], str]
_Hidden = Callable[[str], bool] | None


def _content_found(stdout: bytes, inp: GrepInput, run_cwd: Path, hidden: _Hidden) -> _Found:
    if hidden is not None:
        stdout = _drop_hidden_lines(stdout, run_cwd, hidden)
    lines = format_content(
        stdout,
        line_numbers=inp.line_numbers is not False,
        with_context=bool(_context_args(inp)),
    )
    return lines, ""


def _count_found(stdout: bytes, inp: GrepInput, run_cwd: Path, hidden: _Hidden) -> _Found:
    pairs = []
    for line in stdout.decode("utf-8", "replace").splitlines():
        path, _, n = line.rpartition(":")
        if n.isdigit() and not (hidden and hidden(os.path.join(run_cwd, path))):
            pairs.append((_clean(path), int(n)))
    pairs.sort()
    total = sum(n for _, n in pairs)
    summary = f"Found {total} matching lines across {len(pairs)} files."
    return [f"{p}:{n}" for p, n in pairs], summary


def _files_found(stdout: bytes, inp: GrepInput, run_cwd: Path, hidden: _Hidden) -> _Found:
    names = [p for p in stdout.decode("utf-8", "replace").splitlines() if p]
    if hidden is not None:
        names = [p for p in names if not hidden(os.path.join(run_cwd, p))]
    items = _by_mtime(run_cwd, [_clean(p) for p in names])
    return items, f"Found {len(items)} file{'' if len(items) == 1 else 's'}"


_FOUND: dict[str, Callable[[bytes, GrepInput, Path, _Hidden], _Found]] = {
    "content": _content_found,
    "count": _count_found,
    "files_with_matches": _files_found,
}


def _text(mode: str, found: _Found, inp: GrepInput) -> str:
    """One page of what was found, with the summary where the mode has one."""
    items, summary = found
    if not items:
        return "No files found" if mode == "files_with_matches" else "No matches found"
    page, note = _page(items, inp)
    body = "\n".join(page)
    if mode == "files_with_matches":
        text = f"{summary}\n{body}"
    elif mode == "count":
        text = f"{body}\n\n{summary}"
    else:
        text = body
    return f"{text}\n\n{note}" if note else text


_PATH = PathField("path", required=False)


def _validate(inp: GrepInput, _ctx: ToolUseContext) -> ValidationError | None:
    if inp.pattern == "":
        return ValidationError("pattern must not be empty.")
    return _PATH.check(inp)


def _render_call(inp: GrepInput) -> str:
    return f'pattern: "{inp.pattern}"' + (f', path: "{inp.path}"' if inp.path else "")


def _render_progress(data: Any) -> str:
    if isinstance(data, dict):
        return ", ".join(f"{v} {k}" for k, v in data.items() if k != "tool")
    return str(data)


grep_tool = build_tool(
    name="Grep",
    input_model=GrepInput,
    call=_call,
    description=DESCRIPTION,
    search_hint="search file contents regex ripgrep",
    is_read_only=True,
    is_concurrency_safe=True,
    max_result_size_chars=20_000,
    validate_input=_validate,
    permission_kind=ToolKind.READ,
    permission_paths=_PATH.paths,
    backfill_input=_PATH.backfill,
    render_call=_render_call,
    render_progress=_render_progress,
)

TOOLS = (grep_tool,)
