"""Streaming text reads for the Read tool: a page of ``cat -n`` lines in bounded memory.

The file is read in 64 KiB chunks, decoded incrementally and split into lines; a line longer
than the display cut keeps only its head (plus a character count), so a 1 GB file with no
newline costs one chunk of memory, not a gigabyte. After the page, the rest of the file is only
counted (newlines) and hashed, at byte speed, and only for files up to ``HASH_CAP`` bytes.
"""

from __future__ import annotations

import codecs
import hashlib
import os
from pathlib import Path
from typing import BinaryIO

from tools.builtin._text import MAX_LINE_CHARS, format_line, sniff_encoding
from tools.records import datarecord

__all__ = ["DEFAULT_LIMIT", "HASH_CAP", "MAX_OUTPUT_TOKENS", "TextPage", "read_text_page"]

DEFAULT_LIMIT = 2000
MAX_OUTPUT_TOKENS = 25_000
# Past this size a ranged read (offset/limit) neither hashes nor counts the rest of the file,
# so it costs what it shows; it is then recorded as partial (mtime only) and does not allow an
# Edit. Up to it, the rest is hashed at byte speed (64 MiB in well under a second).
HASH_CAP = 64 * 1024 * 1024
_CHUNK = 64 * 1024
_CONTINUATION = bytes(range(0x80, 0xC0))


def _token_estimate(chars: int) -> int:
    return (chars + 3) // 4


class _LineStream:
    """Lines of a binary file, decoded incrementally; keeps at most a line's displayable head."""

    def __init__(self, f: BinaryIO, encoding: str, bom: bytes) -> None:
        self._f = f
        self.encoding = encoding
        self._decoder = codecs.getincrementaldecoder(encoding)("strict")
        self.hasher = hashlib.sha256()
        self._text = ""
        self._pos = 0
        self._eof = False
        self._last_char = "\n"  # "nothing pending" looks like the end of a line
        self._skip = len(bom)

    def _fill(self) -> bool:
        chunk = self._f.read(_CHUNK)
        if not chunk:
            self._eof = True
            self._text, self._pos = self._decode(b"", final=True), 0
            return bool(self._text)
        self.hasher.update(chunk)
        if self._skip:
            chunk, self._skip = chunk[self._skip :], 0
        self._text, self._pos = self._decode(chunk, final=False), 0
        return True

    def _decode(self, chunk: bytes, *, final: bool) -> str:
        try:
            return self._decoder.decode(chunk, final)
        except UnicodeDecodeError:
            # Not UTF-8 after all: the rest is latin-1 (which decodes every byte).
            pending = self._decoder.getstate()[0]
            self.encoding = "latin-1"
            self._decoder = codecs.getincrementaldecoder("latin-1")()
            return self._decoder.decode(pending + chunk, final)

    def next_line(self) -> tuple[str, int] | None:
        """(head of the line without its newline, total chars of the line), or None at EOF."""
        head = ""
        total = 0
        while True:
            if self._pos >= len(self._text):
                if self._eof or not self._fill():
                    if total == 0 and self._last_char == "\n":
                        return None
                    self._last_char = "\n"
                    return self._finish(head, total)
                continue
            i = self._text.find("\n", self._pos)
            end = len(self._text) if i < 0 else i
            piece = self._text[self._pos : end]
            if len(head) <= MAX_LINE_CHARS:
                head += piece[: MAX_LINE_CHARS + 1 - len(head)]
            total += len(piece)
            if piece:
                self._last_char = piece[-1]
            if i < 0:
                self._pos = len(self._text)
                continue
            self._pos = i + 1
            ended_cr = self._last_char == "\r"
            self._last_char = "\n"
            return self._finish(head, total, ended_cr)

    @staticmethod
    def _finish(head: str, total: int, ended_cr: bool = False) -> tuple[str, int]:
        if ended_cr:
            total -= 1
            if head.endswith("\r") and len(head) > total:
                head = head[:-1]
        return head, total

    @property
    def at_eof(self) -> bool:
        return self._eof and self._pos >= len(self._text)

    def drain(self) -> int:
        """Consume the rest of the file (hashing it); return how many lines it held."""
        rest = self._text[self._pos :]
        count = rest.count("\n")
        last = rest[-1] if rest else self._last_char
        self._pos = len(self._text)
        fast = self.encoding in ("utf-8", "latin-1")
        while not self._eof:
            chunk = self._f.read(_CHUNK * 16)
            if not chunk:
                self._eof = True
                break
            self.hasher.update(chunk)
            if fast:  # "\n" is byte 0x0A in these codecs and never part of another character
                count += chunk.count(b"\n")
                last = chr(chunk[-1])
            else:
                text = self._decode(chunk, final=False)
                count += text.count("\n")
                last = text[-1] if text else last
        return count + (0 if last == "\n" else 1)


@datarecord(frozen=True, slots=True)
class TextPage:
    """One Read of a text file: the numbered lines and what is known about the whole file."""

    content: str
    first_line: int
    last_line: int  # last line shown (first_line - 1 when none)
    total_lines: int | None  # None when the rest of a huge file was not counted
    encoding: str
    budget_cut: bool  # a whole-file read stopped at the token budget (PARTIAL view)
    range_tokens: int | None  # an explicit range over budget: its estimated tokens
    full_hash: str | None  # sha256 of all the file's bytes, when they were all read
    mtime_ns: int
    size: int


def read_text_page(
    path: Path,
    offset: int | None,
    limit: int | None,
    *,
    max_tokens: int = MAX_OUTPUT_TOKENS,
) -> TextPage:
    """Read lines ``offset .. offset+limit-1`` (1-based) as ``cat -n`` text, within budget."""
    explicit = offset is not None or limit is not None
    start = max(offset or 1, 1)
    count = limit if limit is not None else DEFAULT_LIMIT
    budget = max_tokens * 4
    st = os.stat(path)
    with open(path, "rb") as f:
        encoding, bom = sniff_encoding(f.read(4))
        f.seek(0)
        stream = _LineStream(f, encoding, bom)
        out: list[str] = []
        chars = 0  # of the lines kept
        range_chars = 0  # of every line in the requested range
        over = budget_cut = False
        consumed = 0
        while consumed - start + 1 < count:
            line = stream.next_line()
            if line is None:
                break
            consumed += 1
            if consumed < start:
                continue
            formatted = format_line(consumed, *line)
            add = len(formatted) + (1 if range_chars else 0)
            range_chars += add
            if over:
                continue
            if chars + add > budget:
                if not explicit:
                    budget_cut = True
                    break
                over = True
                continue
            out.append(formatted)
            chars += add
        total_lines: int | None = None
        full_hash: str | None = None
        if stream.at_eof or st.st_size <= HASH_CAP or not explicit:
            # A whole-file read always learns the line count (for its notices); a ranged read
            # of a huge file stops here so it costs what it shows.
            total_lines = consumed + stream.drain()
            full_hash = stream.hasher.hexdigest()
    return TextPage(
        content="\n".join(out),
        first_line=start,
        last_line=start - 1 + len(out),
        total_lines=total_lines,
        encoding=stream.encoding,
        budget_cut=budget_cut,
        range_tokens=_token_estimate(range_chars) if over else None,
        full_hash=full_hash,
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
    )
