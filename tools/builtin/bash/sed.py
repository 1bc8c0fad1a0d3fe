"""Preview a simple ``sed -i`` edit, and apply exactly what was previewed.

For one simple command ``sed -i [-E|-r] (-e SCRIPT)... | SCRIPT) FILE`` whose scripts are only
``s/…/…/flags`` substitutions, ``prepare_prompt`` runs the real ``sed --sandbox`` (argv, no
shell) on a temporary COPY of the file and returns the unified diff plus a copy of the input
with ``simulated_sed_edit`` attached (new content + the sha256 of the file at preview time).
When the user approves, ``call`` writes that content (atomic temp+rename, mode kept) instead of
running sed, and refuses if the file changed since the preview. Anything else runs normally.

The parser is deliberately narrow: words may be single-quoted, double-quoted without ``$``,
backquote, backslash or ``!``, or bare from a small safe alphabet; no operators, redirections,
expansions or globs. ``-i`` with a backup suffix (``-i.bak``) is not simulated.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tools.context import content_hash
from tools.records import datarecord

__all__ = [
    "MAX_SED_FILE_BYTES",
    "SedEdit",
    "SimulatedSedEdit",
    "StaleSedEdit",
    "apply_simulated_edit",
    "parse_sed_edit",
    "simulate_sed_edit",
]

MAX_SED_FILE_BYTES = 10 * 1024 * 1024
_SED_TIMEOUT_S = 10.0
_BARE_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,+=@%^")
_S_FLAGS = frozenset("gpiImM0123456789")


class SimulatedSedEdit(BaseModel):
    """The previewed result of a sed edit, attached to the Bash input by ``prepare_prompt``."""

    model_config = ConfigDict(frozen=True)

    file_path: str  # absolute
    new_content: str
    original_hash: str  # sha256 of the file's bytes when the preview was made


class StaleSedEdit(Exception):
    """The file changed (or the command no longer matches) since the preview: nothing written."""


@datarecord(frozen=True, slots=True)
class SedEdit:
    """A parsed simple in-place sed substitution."""

    file: str  # as written in the command
    scripts: tuple[str, ...]
    extended: bool


def _words(command: str) -> list[str] | None:
    """Split into words, or None if anything beyond plain words and safe quotes appears."""
    words: list[str] = []
    cur: list[str] = []
    in_word = False
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t":
            if in_word:
                words.append("".join(cur))
                cur, in_word = [], False
            i += 1
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            cur.append(command[i + 1 : end])
            in_word, i = True, end + 1
        elif c == '"':
            end = command.find('"', i + 1)
            if end < 0:
                return None
            body = command[i + 1 : end]
            if any(ch in body for ch in "$`\\!"):
                return None
            cur.append(body)
            in_word, i = True, end + 1
        elif c in _BARE_OK:
            cur.append(c)
            in_word, i = True, i + 1
        else:
            return None  # operators, redirections, expansions, globs, newlines, comments
    if in_word:
        words.append("".join(cur))
    return words


def _valid_script(script: str) -> bool:
    """Only ``s`` commands with safe flags, separated by ``;`` or newlines."""
    i, n, count = 0, len(script), 0
    while True:
        while i < n and script[i] in " \t;\n":
            i += 1
        if i >= n:
            return count > 0
        end = _substitution_end(script, i)
        if end is None:
            return False
        i, count = end, count + 1


def _substitution_end(script: str, i: int) -> int | None:
    """Where the ``s`` command at ``i`` ends (past its flags and blanks, at a ``;``, a newline
    or the end), or None if it is not a safe substitution."""
    n = len(script)
    if script[i] != "s" or i + 1 >= n:
        return None
    delim = script[i + 1]
    if delim.isalnum() or delim in " \t\n\\":
        return None
    end = _part_end(script, i + 2, delim)  # the pattern
    if end is not None:
        end = _part_end(script, end, delim)  # the replacement
    if end is None:
        return None
    while end < n and script[end] in _S_FLAGS:
        end += 1
    while end < n and script[end] in " \t":
        end += 1
    if end < n and script[end] not in ";\n":
        return None
    return end


def _part_end(script: str, i: int, delim: str) -> int | None:
    """Just past the ``delim`` that closes the part starting at ``i`` (backslash escapes
    skipped), or None if the line ends first."""
    n = len(script)
    while True:
        if i >= n or script[i] == "\n":
            return None
        if script[i] == "\\":
            if i + 1 >= n or script[i + 1] == "\n":
                return None
            i += 2
            continue
        i += 1
        if script[i - 1] == delim:
            return i


@datarecord(slots=True)
class _SedArgs:
    """The words after ``sed``, sorted: scripts, file operands and the two flags that matter."""

    scripts: list[str] = field(default_factory=list)
    positional: list[str] = field(default_factory=list)
    in_place: bool = False
    extended: bool = False


def parse_sed_edit(command: str) -> SedEdit | None:
    """The edit if ``command`` is exactly one simple ``sed -i`` substitution on one file."""
    words = _words(command.strip())
    if not words or words[0] != "sed":
        return None
    parsed = _parse_args(words[1:])
    if parsed is None:
        return None
    scripts, positional = parsed.scripts, parsed.positional
    if not scripts and positional:
        scripts.append(positional.pop(0))
    if not parsed.in_place or len(positional) != 1 or not scripts:
        return None
    if not all(_valid_script(s) for s in scripts):
        return None
    return SedEdit(file=positional[0], scripts=tuple(scripts), extended=parsed.extended)


def _parse_args(words: list[str]) -> _SedArgs | None:
    """The arguments, or None if any option is one this parser does not simulate."""
    parsed = _SedArgs()
    args = iter(words)
    for word in args:
        if word == "--":
            parsed.positional += args  # options end: the rest are operands
        elif not word.startswith("-") or word == "-":
            parsed.positional.append(word)
        elif not _take_option(parsed, word, args):
            return None
    return parsed


def _take_option(parsed: _SedArgs, word: str, args: Iterator[str]) -> bool:
    """Apply option ``word`` (taking its value from ``args`` when it has one); False if it is
    not one this parser simulates."""
    if word == "--in-place":
        parsed.in_place = True
    elif word == "--regexp-extended":
        parsed.extended = True
    elif word.startswith("--expression="):
        parsed.scripts.append(word.removeprefix("--expression="))
    elif word in ("-e", "--expression"):
        script = next(args, None)
        if script is None:
            return False
        parsed.scripts.append(script)
    elif not word.startswith("--") and set(word[1:]) <= {"E", "r", "i"}:
        # ``-Ei`` is -E and -i; ``-iE`` would be -i with backup suffix "E" (not simulated).
        if "i" in word[1:-1]:
            return False
        parsed.in_place = parsed.in_place or word.endswith("i")
        parsed.extended = parsed.extended or any(ch in "Er" for ch in word[1:])
    else:
        return False
    return True


def _regular_file(path: Path) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size <= MAX_SED_FILE_BYTES


async def simulate_sed_edit(edit: SedEdit, cwd: Path) -> tuple[str, SimulatedSedEdit] | None:
    """Run the edit on a copy with the real sed; the diff and the simulated edit, or None."""
    sed = shutil.which("sed")
    target = (cwd / edit.file).absolute()
    if sed is None or not _regular_file(target):
        return None
    try:
        original = target.read_bytes()
        original_text = original.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    with tempfile.TemporaryDirectory(prefix="nerve-sed-") as tmp:
        copy = Path(tmp) / (target.name or "file")
        copy.write_bytes(original)
        argv = [sed, "--sandbox", *(["-E"] if edit.extended else []), "-i"]
        for script in edit.scripts:
            argv += ["-e", script]
        argv += ["--", str(copy)]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            rc = await asyncio.wait_for(proc.wait(), _SED_TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return None
        if rc != 0:
            return None  # a bad script fails the same way when run; no preview to offer
        try:
            new_text = copy.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    diff = "".join(
        difflib.unified_diff(
            original_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(target),
            tofile=str(target),
        )
    )
    simulated = SimulatedSedEdit(
        file_path=str(target), new_content=new_text, original_hash=content_hash(original)
    )
    return diff or "(sed makes no change to the file)", simulated


def apply_simulated_edit(edit: SimulatedSedEdit) -> None:
    """Write the previewed content atomically (mode kept); ``StaleSedEdit`` if the file changed."""
    target = Path(edit.file_path)
    if not _regular_file(target):
        raise StaleSedEdit(f"{target} is no longer a regular file; nothing was written")
    current = target.read_bytes()
    if content_hash(current) != edit.original_hash:
        raise StaleSedEdit(
            f"{target} changed since the sed preview was shown; nothing was written. "
            "Run the command again to see a fresh preview."
        )
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(edit.new_content.encode("utf-8"))
            fh.flush()
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
