"""The Bash tool: run a command in a fresh ``bash -c`` with a persistent working directory.

Each call is a fresh bash (no login shell, no rc files; exported variables do not persist).
The working directory persists in ``ctx.state.conversation.bash_cwd`` as long as it stays inside
the working dirs; leaving them resets it to ``ctx.cwd`` with the notice "Shell cwd was reset to
<dir>". The final directory is found by a trailer appended to the script on its own line
(``__nerve_rc=$?; builtin pwd -P >&<fd>; builtin exit $__nerve_rc``, where ``<fd>`` is the
write end of a private pipe at a high fd number): it runs in the top-level shell after the
command, so a ``cd`` inside a subshell does not count, the exit code is kept, and a command
that ends with ``exit`` (or ``exec``) keeps the previous directory. The command's text is
unchanged; two newlines separate it from the trailer, so a trailing comment or a trailing
line-continuation backslash still ends where it did.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from permissions.types import ToolKind
from tools.base import ProgressFn, Tool, build_tool
from tools.builtin.bash import sed
from tools.builtin.bash.cwd import current_cwd, cwd_channel, read_cwd, settle_cwd
from tools.builtin.bash.format import (
    BashOutput,
    bash_to_content,
    benign_exit,
    excerpt,
    format_size,
)
from tools.builtin.bash.images import MAX_IMAGE_BYTES, image_block, sniff_image
from tools.builtin.bash.sandboxed import Foreground, run_command, start_task
from tools.context import ToolUseContext
from tools.process.output import BashProgress, OutputCollector, new_spool_path, spool_dir
from tools.process.runner import bash_path
from tools.result import ToolResult, ValidationError
from tools.terminal_text import reveal

__all__ = ["BASH_TOOL", "DEFAULT_TIMEOUT_MS", "MAX_TIMEOUT_MS", "BashInput", "current_cwd"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
_INTERNAL_KEYS = ("_simulated_sed_edit", "simulated_sed_edit")

DESCRIPTION = """Executes a bash command and returns its output (stdout and stderr merged).

- Each call runs in a fresh `bash -c` (no rc files). The working directory persists between
  calls while it stays inside the project's working directories; exported variables do not.
- Prefer the dedicated tools for reading (Read), searching (Grep, Glob) and editing (Edit).
- Quote paths that contain spaces. Chain dependent commands with `&&`.
- `timeout` is in milliseconds: default 120000, max 600000. On timeout the whole process
  group is killed.
- Output over 30000 characters is cut to a head and a tail; the full output is saved to a file
  whose path is given, so you can Read or Grep it.
- For long-running commands (servers, watchers, long builds) set `run_in_background: true`;
  you get a task id at once. Read new output with TaskOutput and end it with TaskStop.
  Do not `sleep` to wait: a standalone `sleep` is refused."""


class BashInput(BaseModel):
    """Input of the Bash tool."""

    # ``simulated_sed_edit`` is internal: never in the schema, and stripped from any dict that
    # is validated, so only ``prepare_prompt`` (via ``model_copy``) can attach it.

    model_config = ConfigDict(populate_by_name=True)

    command: str = Field(description="The command to execute")
    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
    )
    description: str | None = Field(
        default=None,
        description="Clear, concise description of what this command does in 5-10 words, "
        "in active voice.",
    )
    run_in_background: bool = Field(
        default=False,
        description="Set to true to run this command in the background. "
        "Use TaskOutput to read the output later.",
    )
    dangerouslyDisableSandbox: bool = Field(
        default=False,
        description="Set to true to run this command outside the sandbox (when one is on). "
        "The user is asked as usual; use it only when the sandbox is what makes it fail.",
    )
    simulated_sed_edit: SkipJsonSchema[sed.SimulatedSedEdit | None] = Field(
        default=None, alias="_simulated_sed_edit", exclude=True
    )

    @model_validator(mode="before")
    @classmethod
    def _strip_internal(cls, data: Any) -> Any:
        # The model (or a hook, or a transcript) must never be able to inject a sed result.
        if isinstance(data, dict) and any(k in data for k in _INTERNAL_KEYS):
            data = {k: v for k, v in data.items() if k not in _INTERNAL_KEYS}
        return data


# -- validation and traits --------------------------------------------------------------------

_SLEEP_RE = re.compile(r"^sleep\s+((?:\d+(?:\.\d*)?|\.\d+)[smhd]?\s*|infinity\s*)+$")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _sleep_seconds(command: str) -> float | None:
    """Total seconds if the whole command is only ``sleep`` (chained by ;, && or newlines)."""
    parts = [p.strip() for p in re.split(r"&&|;|\n", command)]
    parts = [p for p in parts if p]
    if not parts or not all(_SLEEP_RE.match(p) for p in parts):
        return None
    total = 0.0
    for part in parts:
        for arg in part.split()[1:]:
            if arg == "infinity":
                return float("inf")
            unit = arg[-1] if arg[-1] in _UNITS else "s"
            total += float(arg.rstrip("smhd")) * _UNITS[unit]
    return total


async def _validate(inp: BashInput, _ctx: ToolUseContext) -> ValidationError | None:
    if not inp.command.strip():
        return ValidationError("command is empty", code="empty_command")
    if "\x00" in inp.command:
        return ValidationError("command contains a NUL byte", code="nul_byte")
    seconds = _sleep_seconds(inp.command)
    if seconds is not None and seconds >= 2 and not inp.run_in_background:
        return ValidationError(
            f"Blocked: standalone `{inp.command.strip()}` only wastes time. To wait for a "
            "long-running command, run it with run_in_background and poll with TaskOutput; "
            "to wait for a condition, loop on a check (e.g. `until <check>; do sleep 1; done`).",
            code="standalone_sleep",
        )
    return None


def _is_read_only(inp: BashInput) -> bool:
    if inp.simulated_sed_edit is not None:
        return False
    try:
        from permissions.bash import is_read_only_command  # type: ignore[attr-defined]
    except ImportError:  # the analysis is not available: fail closed
        return False
    try:
        return bool(is_read_only_command(inp.command, None))
    except Exception:
        return False


def _is_concurrency_safe(inp: BashInput) -> bool:
    return not inp.run_in_background and _is_read_only(inp)


# -- call -------------------------------------------------------------------------------------


def _build_output(
    inp: BashInput, collector: OutputCollector, outcome: Any, cwd: Path, notices: list[str]
) -> BashOutput:
    exit_code = outcome.exit_code
    failed = (
        outcome.timed_out
        or outcome.interrupted
        or outcome.signal is not None
        or (exit_code not in (0, None) and not benign_exit(inp.command, exit_code))
    )
    common: dict[str, Any] = {
        "exit_code": exit_code,
        "signal": outcome.signal,
        "interrupted": outcome.interrupted,
        "timed_out": outcome.timed_out,
        "timeout_ms": inp.timeout or DEFAULT_TIMEOUT_MS,
        "cwd": str(cwd),
        "total_bytes": collector.total_bytes,
        "total_lines": collector.total_lines,
        "is_error": failed,
    }
    media_type = sniff_image(collector.read_prefix(16) or b"") if exit_code == 0 else None
    if media_type is not None:
        size = collector.total_bytes
        data = collector.read_prefix(size) if size <= MAX_IMAGE_BYTES else None
        if data is not None and len(data) == size:
            return BashOutput(
                output="", image=image_block(data, media_type), notices=tuple(notices), **common
            )
        notices = [
            f"[stdout is a {media_type} image of {format_size(size)}: too large to show "
            f"(limit {format_size(MAX_IMAGE_BYTES)}); write it to a file and inspect it instead]",
            *notices,
        ]
        return BashOutput(output="", notices=tuple(notices), **common)
    text, truncated = excerpt(collector, failed=failed)
    path: Path | None = None
    if truncated:
        path = collector.ensure_spool()
        shown = format_size(collector.total_bytes)
        if path is None:
            note = f"[Output too large to show in full ({shown}); it could not be saved]"
        else:
            note = (
                f"[Output too large to show in full ({shown}, {collector.total_lines} lines). "
                f"Full output saved to: {path} (read it with Read offset/limit or Grep)"
            )
            note += " — the file holds only the first 64MB]" if collector.spool_cut else "]"
        notices = [note, *notices]
    return BashOutput(
        output=text,
        truncated=truncated,
        output_file=str(path) if path is not None else None,
        notices=tuple(notices),
        **common,
    )


async def _run_foreground(
    inp: BashInput, ctx: ToolUseContext, on_progress: ProgressFn
) -> BashOutput:
    cwd, notices = current_cwd(ctx)
    session_dir = ctx.options.session_dir

    def spool_path() -> Path:
        return new_spool_path(spool_dir(session_dir, "bash-output"))

    cwd_r, cwd_w = cwd_channel()
    script = (
        f"{inp.command}\n\n__nerve_rc=$?; builtin pwd -P >&{cwd_w} 2>/dev/null; "
        "builtin exit $__nerve_rc"
    )
    collector = OutputCollector(spool_path_factory=spool_path, on_progress=on_progress)
    try:
        foreground = Foreground(
            [bash_path(), "-c", script],
            cwd=cwd,
            on_data=collector.feed,
            timeout_s=(inp.timeout or DEFAULT_TIMEOUT_MS) / 1000,
            pass_fds=(cwd_w,),
        )
        outcome = await run_command(
            foreground,
            ctx=ctx,
            command=inp.command,
            disable=inp.dangerouslyDisableSandbox,
            notices=notices,
        )
        collector.finish()
        final = settle_cwd(ctx, read_cwd(cwd_r), notices)
        return _build_output(inp, collector, outcome, final, notices)
    finally:
        collector.close()
        os.close(cwd_r)
        os.close(cwd_w)


async def _run_background(inp: BashInput, ctx: ToolUseContext) -> BashOutput:
    cwd, notices = current_cwd(ctx)
    snap: Any = await start_task(
        inp.command,
        ctx=ctx,
        disable=inp.dangerouslyDisableSandbox,
        cwd=cwd,
        notices=notices,
        description=inp.description or "",
    )
    info = {"task_id": snap.task_id, "output_file": snap.output_path}
    text = (
        f"Command running in background.\n{json.dumps(info)}\n"
        f'Read its output with TaskOutput(task_id="{snap.task_id}"); '
        "end it with TaskStop."
    )
    return BashOutput(output=text, exit_code=None, cwd=str(cwd), notices=tuple(notices), extra=info)


async def _call(inp: BashInput, ctx: ToolUseContext, on_progress: ProgressFn) -> ToolResult:
    if inp.simulated_sed_edit is not None:
        return _apply_sed(inp, ctx)
    if inp.run_in_background:
        out = await _run_background(inp, ctx)
    else:
        out = await _run_foreground(inp, ctx, on_progress)
    return ToolResult(data=out, is_error=out.is_error)


def _apply_sed(inp: BashInput, ctx: ToolUseContext) -> ToolResult:
    edit = inp.simulated_sed_edit
    assert edit is not None
    cwd, notices = current_cwd(ctx)
    parsed = sed.parse_sed_edit(inp.command)
    expected = str((cwd / parsed.file).absolute()) if parsed is not None else None
    if expected != edit.file_path:
        msg = "The sed preview does not match this command; nothing was written."
        return ToolResult(data=BashOutput(output=msg, exit_code=None, is_error=True), is_error=True)
    try:
        sed.apply_simulated_edit(edit)
    except (sed.StaleSedEdit, OSError) as exc:
        return ToolResult(
            data=BashOutput(output=str(exc), exit_code=None, is_error=True), is_error=True
        )
    return ToolResult(data=BashOutput(output="", exit_code=0, cwd=str(cwd), notices=tuple(notices)))


async def _prepare_prompt(
    inp: BashInput, ctx: ToolUseContext
) -> tuple[str | None, BashInput | None]:
    """For a simple ``sed -i`` edit: the diff, and the input carrying the simulated result."""
    if inp.run_in_background:
        return None, None
    parsed = sed.parse_sed_edit(inp.command)
    if parsed is None:
        return None, None
    cwd, _ = current_cwd(ctx)
    simulated = await sed.simulate_sed_edit(parsed, cwd)
    if simulated is None:
        return None, None
    diff, edit = simulated
    return diff, inp.model_copy(update={"simulated_sed_edit": edit})


# -- rendering --------------------------------------------------------------------------------


def _render_call(inp: BashInput) -> str:
    # written out, not split away: a `\r` or an escape sequence must show in the header
    one_line = " ".join(reveal(inp.command).split())
    text = one_line if len(one_line) <= 120 else one_line[:119] + "…"
    return text + (" &" if inp.run_in_background else "")


def _render_progress(progress: Any) -> str:
    if not isinstance(progress, BashProgress):
        return str(progress)
    tail = "\n".join(progress.last_lines)
    return f"{tail}\n… {progress.lines_so_far} lines, {format_size(progress.bytes)}".lstrip("\n")


def _render_result(out: Any) -> str:
    if not isinstance(out, BashOutput):
        return str(out)
    if "task_id" in out.extra:
        return f"Running in background as {out.extra['task_id']}"
    if out.image is not None:
        return f"Image ({out.image['source']['media_type']})"
    status = ", ".join(s.strip("[]") for s in out.status_lines()) or "Done"
    return f"{status} · {out.total_lines} lines" if out.total_bytes else status


BASH_TOOL: Tool[BashInput] = build_tool(
    name="Bash",
    input_model=BashInput,
    call=_call,
    description=DESCRIPTION,
    search_hint="run shell commands",
    is_read_only=_is_read_only,
    is_concurrency_safe=_is_concurrency_safe,
    max_result_size_chars=30_000,
    validate_input=_validate,
    permission_kind=ToolKind.BASH,
    to_content=bash_to_content,
    render_call=_render_call,
    render_progress=_render_progress,
    render_result=_render_result,
    prepare_prompt=_prepare_prompt,
)
