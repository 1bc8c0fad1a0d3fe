"""What the model sees of a command: the output (whole, or head + tail + the spool path), status.

Sizes (chars): output up to ``MAX_INLINE_CHARS`` (30,000) is returned whole. Above it, a
successful command returns a head and a tail (``SUCCESS_HEAD_CHARS`` + ``SUCCESS_TAIL_CHARS``)
with a ``... [N lines truncated] ...`` marker and the path of the spool file holding the full
output, so the result stays under Bash's result limit and the pipeline never persists it a
second time; the model can Read or Grep the spool file. A failed command gets a smaller
head + tail excerpt (``FAILURE_HEAD_CHARS`` + ``FAILURE_TAIL_CHARS``, ~10,000 chars), where the
tail (the error) matters most.
"""

from __future__ import annotations

import shlex
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from tools.messages import ImageBlock, ResultBlock, text_block
from tools.process.output import OutputCollector, clean_text

__all__ = [
    "MAX_INLINE_CHARS",
    "BashOutput",
    "bash_to_content",
    "benign_exit",
    "excerpt",
    "format_size",
]

MAX_INLINE_CHARS = 30_000
SUCCESS_HEAD_CHARS = 16_000
SUCCESS_TAIL_CHARS = 4_000
FAILURE_HEAD_CHARS = 4_000
FAILURE_TAIL_CHARS = 6_000

# Programs whose exit code 1 means "no match" / "differs" / "false", not failure. (stdout and
# stderr are merged, so "no stderr" cannot be checked; their real errors exit with 2.)
_EXIT1_OK = frozenset({"grep", "egrep", "fgrep", "rg", "diff", "cmp", "test", "[", "[[", "find"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", ";;", ";&", ";;&"})
_WRAPPERS = frozenset({"command", "builtin", "exec", "time", "nohup", "!"})


class BashOutput(BaseModel):
    """The typed result of a Bash call (``to_content`` renders it for the model; hooks and
    transcripts get ``model_dump``)."""

    model_config = ConfigDict(frozen=True)

    output: str
    exit_code: int | None
    signal: str | None = None
    interrupted: bool = False
    timed_out: bool = False
    timeout_ms: int = 0
    cwd: str = ""
    truncated: bool = False
    output_file: str | None = None
    total_bytes: int = 0
    total_lines: int = 0
    notices: tuple[str, ...] = ()
    image: dict[str, Any] | None = None
    is_error: bool = False
    extra: dict[str, Any] = Field(default_factory=dict)

    def status_lines(self) -> list[str]:
        lines: list[str] = []
        if self.timed_out:
            lines.append(f"[Command timed out after {self.timeout_ms / 1000:g}s and was killed]")
        elif self.interrupted:
            lines.append("[Command was interrupted and killed]")
        elif self.signal is not None:
            lines.append(f"[Killed by signal {self.signal}]")
        if self.exit_code not in (None, 0):
            lines.append(f"[Exit code {self.exit_code}]")
        lines.extend(self.notices)
        return lines


def bash_to_content(data: Any) -> str | list[ResultBlock]:
    """Render a :class:`BashOutput` (or any other value) as tool_result content."""
    if not isinstance(data, BashOutput):
        return data if isinstance(data, str) else str(data)
    status = data.status_lines()
    if data.image is not None:
        blocks: list[ResultBlock] = [cast(ImageBlock, data.image)]  # a pydantic field's dict
        if status:
            blocks.append(text_block("\n".join(status)))
        return blocks
    body = data.output.rstrip("\n")
    if not body and not status:
        return "(Bash completed with no output)"
    return "\n".join(part for part in (body, *status) if part)


def format_size(n: int) -> str:
    """1024-based: ``512 bytes``, ``12.3KB``, ``1.5MB`` (trailing ``.0`` dropped)."""
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            text = f"{value:.1f}".removesuffix(".0")
            return f"{text}{unit}"
    return f"{n} bytes"  # pragma: no cover


def _cut_head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    nl = cut.rfind("\n")
    return cut[: nl + 1] if nl >= limit // 2 else cut


def _cut_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    nl = cut.find("\n")
    return cut[nl + 1 :] if 0 <= nl < limit // 2 else cut


def excerpt(collector: OutputCollector, *, failed: bool) -> tuple[str, bool]:
    """The output as shown to the model, and whether it was cut."""
    if collector.complete:
        text = clean_text(collector.all_bytes())
        if len(text) <= MAX_INLINE_CHARS:
            return text, False
        head_src, tail_src = text, text
    else:
        head_src = clean_text(collector.head_bytes())
        tail_src = clean_text(collector.tail_bytes())
    head_n, tail_n = (
        (FAILURE_HEAD_CHARS, FAILURE_TAIL_CHARS)
        if failed
        else (SUCCESS_HEAD_CHARS, SUCCESS_TAIL_CHARS)
    )
    head = _cut_head(head_src, head_n)
    tail = _cut_tail(tail_src, tail_n)
    shown_lines = head.count("\n") + tail.count("\n")
    omitted = max(collector.total_lines - shown_lines, 0)
    if not head.endswith("\n"):
        head += "\n"
    return f"{head}... [{omitted} lines truncated] ...\n{tail}", True


def _last_program(command: str) -> str | None:
    """The program name of the last simple command (``a | grep x`` -> ``grep``), if clear."""
    try:
        lexer = shlex.shlex(command.replace("\n", ";"), posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    segment: list[str] = []
    for tok in tokens:
        if tok in _SEPARATORS:
            segment = []
        else:
            segment.append(tok)
    words = segment
    while words and (_is_assignment(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    if not words:
        return None
    return words[0].rsplit("/", 1)[-1]


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.isidentifier()


def benign_exit(command: str, exit_code: int | None) -> bool:
    """Exit 1 of grep/rg/diff/test/[/find/cmp (last command of the pipeline) is a plain result."""
    if exit_code != 1:
        return False
    return _last_program(command) in _EXIT1_OK
