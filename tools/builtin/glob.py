"""Glob: files whose path matches a pattern, newest first.

Matching is ripgrep's ``--glob`` (gitignore-style): a pattern without ``/`` matches a file name
at any depth (``*.py`` finds every Python file), one with ``/`` is anchored at the search dir
(``src/**/*.ts``), ``**`` spans directories, ``{a,b}`` alternates. ``.gitignore`` is NOT
respected (as in Claude Code), hidden files are included, version-control directories are
always skipped. ``rg --files`` lists the tree in parallel; only the matches are stat'ed (for
the mtime sort). Without ripgrep a pure-Python walk with the same semantics is used.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from permissions.types import ToolKind
from tools.base import ProgressFn, build_tool
from tools.builtin._fs import hidden_by_read_rules, resolve_path
from tools.builtin._path_field import PathField
from tools.builtin._rg import VCS_DIRS, find_rg, run_rg, vcs_excludes
from tools.context import ToolUseContext
from tools.result import ToolResult, ValidationError

__all__ = ["MAX_RESULTS", "TOOLS", "GlobInput", "glob_regex", "glob_tool", "walk_glob"]

MAX_RESULTS = 100
TRUNCATED_NOTE = "(Results are truncated. Consider using a more specific path or pattern.)"
_MAGIC = re.compile(r"[*?\[{]")

DESCRIPTION = """Fast file pattern matching that works with any codebase size.

- Supports glob patterns like "**/*.js" or "src/**/*.ts"; a pattern without "/" (like "*.py")
  matches file names at any depth.
- Returns matching file paths (absolute) sorted by modification time, newest first; at most
  100 results.
- Use it to find files by name. For an open-ended search that needs several rounds of globbing
  and grepping, use the Agent tool instead."""


class GlobInput(BaseModel):
    """Input of Glob."""

    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(description="The glob pattern to match files against")
    path: str | None = Field(
        default=None,
        description="The directory to search in. If not specified, the current working "
        'directory is used. Omit it for the default; do not pass "undefined" or "null".',
    )


def _split_absolute(pattern: str) -> tuple[str | None, str]:
    """An absolute pattern's static directory prefix and the relative rest."""
    if not os.path.isabs(pattern):
        return None, pattern
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        if _MAGIC.search(part):
            return "/".join(parts[:i]) or "/", "/".join(parts[i:])
    return os.path.dirname(pattern) or "/", os.path.basename(pattern)


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j].replace("\\", "\\\\")
                out.append("[^" + body[1:] + "]" if body[:1] in "!^" and body else f"[{body}]")
                i = j
        elif c == "{":
            j = glob.find("}", i)
            if j < 0:
                out.append(re.escape(c))
            else:
                out.append(
                    "(?:" + "|".join(_translate(a) for a in glob[i + 1 : j].split(",")) + ")"
                )
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The gitignore-style glob as a regex over '/'-separated paths relative to the root."""
    if "/" not in pattern.rstrip("/"):
        return re.compile("(?:.*/)?" + _translate(pattern) + r"\Z", re.S)
    return re.compile(_translate(pattern.lstrip("/")) + r"\Z", re.S)


def walk_glob(root: Path, pattern: str) -> list[str]:
    """Relative paths of files under ``root`` matching ``pattern`` (the no-ripgrep path)."""
    rx = glob_regex(pattern)
    found: list[str] = []
    skip = set(VCS_DIRS)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        rel = os.path.relpath(dirpath, root)
        prefix = "" if rel == "." else rel + "/"
        found.extend(prefix + name for name in filenames if rx.match(prefix + name))
    return found


async def _list_matches(root: Path, pattern: str, ctx: ToolUseContext) -> list[str] | str:
    if find_rg() is None:
        return await asyncio.to_thread(walk_glob, root, pattern)
    args = ["--files", "--no-ignore", "--hidden", "--glob", pattern, *vcs_excludes(), "."]
    run = await run_rg(args, root, ctx.abort)
    if run.aborted:
        return "Glob was interrupted."
    if run.returncode == 2 and not run.stdout:
        return f"Glob failed: {run.stderr.strip()}"
    return [
        p[2:] if p.startswith("./") else p
        # as os.fsdecode does: a name that is not UTF-8 still names its file (for stat)
        for p in run.stdout.decode("utf-8", "surrogateescape").splitlines()
    ]


def _sorted_newest_first(root: Path, rels: list[str]) -> list[str]:
    entries: list[tuple[int, str]] = []
    for rel in rels:
        full = os.path.join(root, rel)
        try:
            mtime = os.stat(full).st_mtime_ns
        except OSError:
            continue  # vanished (or a dangling link) between listing and stat
        entries.append((-mtime, full))
    entries.sort()
    return [full for _, full in entries]


async def _call(inp: GlobInput, ctx: ToolUseContext, progress: ProgressFn) -> ToolResult:
    root = resolve_path(inp.path, ctx.cwd) if inp.path else ctx.cwd
    pattern = inp.pattern
    base, rest = _split_absolute(pattern)
    if base is not None:
        root, pattern = Path(base), rest
    if not root.exists():
        return ToolResult(data=f"Directory does not exist: {root}", is_error=True)
    if not root.is_dir():
        return ToolResult(data=f"Path is not a directory: {root}", is_error=True)
    matches = await _list_matches(root, pattern, ctx)
    if isinstance(matches, str):
        return ToolResult(data=matches, is_error=True)
    progress({"tool": "Glob", "files": len(matches)})
    hidden = hidden_by_read_rules(ctx)
    if hidden is not None:  # names of files a Read deny/ask rule covers are not shown either
        matches = [m for m in matches if not hidden(os.path.join(root, m))]
    ordered = await asyncio.to_thread(_sorted_newest_first, root, matches)
    if not ordered:
        return ToolResult(data="No files found")
    shown = [_printable(p) for p in ordered[:MAX_RESULTS]]
    text = "\n".join(shown)
    if len(ordered) > MAX_RESULTS:
        text += "\n" + TRUNCATED_NOTE
    return ToolResult(data=text)


def _printable(path: str) -> str:
    """A path as text: bytes that are not UTF-8 shown as ``\\xff`` escapes (a bash
    ``$'...'`` string takes them back)."""
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return path.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


_PATH = PathField("path", required=False)


def _validate(inp: GlobInput, _ctx: ToolUseContext) -> ValidationError | None:
    if not inp.pattern.strip():
        return ValidationError("pattern must not be empty.")
    return _PATH.check(inp)


def _paths(inp: GlobInput, ctx: ToolUseContext) -> tuple[Path, ...]:
    base, _ = _split_absolute(inp.pattern)
    if base is not None:
        return (Path(os.path.normpath(base)),)
    return _PATH.paths(inp, ctx)


def _render_progress(data: Any) -> str:
    if isinstance(data, dict) and "files" in data:
        n = data["files"]
        return f"{n} file{'s' if n != 1 else ''} matched"
    return str(data)


def _render_call(inp: GlobInput) -> str:
    return f'pattern: "{inp.pattern}"' + (f', path: "{inp.path}"' if inp.path else "")


def _render_result(data: Any) -> str:
    text = str(data)
    if text == "No files found":
        return text
    return f"Found {sum(1 for ln in text.splitlines() if ln.startswith('/'))} files"


glob_tool = build_tool(
    name="Glob",
    input_model=GlobInput,
    call=_call,
    description=DESCRIPTION,
    search_hint="find files by name pattern",
    is_read_only=True,
    is_concurrency_safe=True,
    max_result_size_chars=100_000,
    validate_input=_validate,
    permission_kind=ToolKind.READ,
    permission_paths=_paths,
    backfill_input=_PATH.backfill,
    render_call=_render_call,
    render_progress=_render_progress,
    render_result=_render_result,
)

TOOLS = (glob_tool,)
