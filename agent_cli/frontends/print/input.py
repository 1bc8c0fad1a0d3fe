"""What ``nerve -p`` sends as its prompt: the argument, piped stdin, or both.

As Claude Code does, piped stdin is appended to the prompt (``git diff | nerve -p "review
this"`` sends the instruction, a blank line, then the diff) and is the whole prompt when no
argument is given. A prompt argument with a stdin that sends nothing for a few seconds (an
inherited pipe nobody writes to) goes on without it, with a warning, instead of hanging.

A huge stdin is budgeted, never silently cut: past ``STDIN_BUDGET_CHARS`` (or
``NERVE_STDIN_MAX_CHARS``) the whole input is saved under the data dir, the model gets its
beginning and a note with the size and the path (it can Read the rest), and stderr says so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TextIO

from tools.records import datarecord

__all__ = ["STDIN_BUDGET_CHARS", "STDIN_WAIT_S", "PromptInput", "read_prompt"]

STDIN_BUDGET_CHARS = 100_000  # ~25k tokens, what a Read page may cost
STDIN_WAIT_S = 3.0  # Claude Code waits this long for the first byte when a prompt is given
_CHUNK = 1 << 20


@datarecord(frozen=True)
class PromptInput:
    """The prompt to send (None: nothing to send) and what stderr should be told."""

    prompt: str | None
    warnings: tuple[str, ...] = ()
    saved: Path | None = None  # where a stdin over the budget was saved whole


def _budget(env: dict[str, str] | os._Environ[str]) -> int:
    raw = env.get("NERVE_STDIN_MAX_CHARS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return STDIN_BUDGET_CHARS


def _size(n: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + unit
    return f"{n} bytes"


def _readable_within(stdin: TextIO, timeout: float) -> bool:
    """True when stdin has data or EOF within ``timeout`` (a file or StringIO: at once)."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return True
    import select

    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    except (OSError, ValueError):
        return True
    return bool(ready)


def _binary(stdin: TextIO) -> BinaryIO | None:
    buffer = getattr(stdin, "buffer", None)
    return buffer if buffer is not None and hasattr(buffer, "read") else None


def _spill_path(data_dir: Callable[[], Path]) -> Path:
    folder = data_dir() / "stdin"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"


def _read_all(
    stdin: TextIO, budget: int, data_dir: Callable[[], Path]
) -> tuple[str, int, Path | None, bool]:
    """(text kept in memory, total bytes, spill file, had undecodable bytes).

    Reads in chunks; once past ``budget * 4`` bytes (more than any ``budget`` characters can
    take) the rest goes straight to the spill file, so memory stays bounded.
    """
    binary = _binary(stdin)
    if binary is None:  # a text stream given by a caller (tests, embedding)
        text = stdin.read()
        raw = text.encode("utf-8", "surrogateescape")
        if len(text) <= budget:
            return text, len(raw), None, False
        saved = _spill_path(data_dir)
        saved.write_bytes(raw)
        return text[: budget + 1], len(raw), saved, False
    head = bytearray()
    total = 0
    spill: BinaryIO | None = None
    path: Path | None = None
    try:
        while chunk := binary.read(_CHUNK):
            total += len(chunk)
            if spill is None and len(head) + len(chunk) <= budget * 4:
                head += chunk
                continue
            if spill is None:
                path = _spill_path(data_dir)
                spill = path.open("wb")
                spill.write(head)
            spill.write(chunk)
            if len(head) < budget * 4:
                head += chunk[: budget * 4 - len(head)]
    finally:
        if spill is not None:
            spill.close()
    text = bytes(head).decode("utf-8", "replace")
    # a head cut at the byte limit may end inside a character: that is not bad input
    whole = bytes(head if spill is None else head[:-4])
    bad = b"\xef\xbf\xbd" not in whole and "\ufffd" in whole.decode("utf-8", "replace")
    if path is None and len(text) > budget:
        path = _spill_path(data_dir)
        path.write_bytes(bytes(head))
    return text, total, path, bad


def _cut(text: str, budget: int) -> str:
    """The first ``budget`` characters, cut back to a line end when one is past half-way."""
    head = text[:budget]
    nl = head.rfind("\n")
    return head[: nl + 1] if nl > budget // 2 else head


def read_prompt(
    prompt: str | None,
    stdin: TextIO,
    *,
    data_dir: Callable[[], Path],
    env: dict[str, str] | os._Environ[str] | None = None,
    wait_s: float = STDIN_WAIT_S,
) -> PromptInput:
    """The prompt of one print-mode run (see the module docstring)."""
    env = os.environ if env is None else env
    try:
        interactive = stdin.isatty()
    except (AttributeError, ValueError, OSError):
        interactive = False
    if interactive or stdin.closed:
        return PromptInput(prompt or None)
    warnings: list[str] = []
    if prompt and not _readable_within(stdin, wait_s):
        warnings.append(
            f"no input arrived on stdin within {wait_s:g}s; going on with the prompt alone "
            "(redirect stdin from /dev/null to skip the wait)"
        )
        return PromptInput(prompt, tuple(warnings))
    budget = _budget(env)
    piped, total, saved, bad = _read_all(stdin, budget, data_dir)
    if bad:
        warnings.append("stdin is not valid UTF-8: undecodable bytes are shown as U+FFFD")
    if saved is not None:
        kept = _cut(piped, budget)
        piped = (
            f"{kept.rstrip(chr(10))}\n\n[stdin was {_size(total)}, over the prompt budget of "
            f"{budget:,} characters: only its first {len(kept):,} characters are above. The "
            f"whole input is saved at {saved} — Read it for the rest.]"
        )
        warnings.append(
            f"stdin is {_size(total)}, over the prompt budget of {budget:,} characters: the "
            f"model gets its first {len(kept):,} characters and the path of the whole input, "
            f"saved at {saved}"
        )
    if not piped.strip():
        return PromptInput(prompt or None, tuple(warnings), saved)
    if not prompt:
        return PromptInput(piped, tuple(warnings), saved)
    return PromptInput(f"{prompt}\n\n{piped}", tuple(warnings), saved)
