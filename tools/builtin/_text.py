"""Text helpers for the file tools: encodings, line endings, ``cat -n`` lines and diffs.

Encoding detection is a pure function of the bytes, so Edit re-detects the encoding Read saw
(same bytes, same answer) instead of storing it: BOMs first (UTF-8, UTF-16), then strict UTF-8,
then latin-1 (which decodes anything, so nothing is lost on a round trip).
"""

from __future__ import annotations

import codecs
import difflib

from tools.records import datarecord

__all__ = [
    "MAX_LINE_CHARS",
    "DecodedText",
    "decode_bytes",
    "encode_text",
    "format_line",
    "number_lines",
    "sniff_encoding",
    "unified_diff",
]

MAX_LINE_CHARS = 2000


@datarecord(frozen=True, slots=True)
class DecodedText:
    """A file's text with how to write it back: codec, BOM and line-ending style."""

    text: str  # with the file's own line endings, BOM removed
    encoding: str  # "utf-8", "utf-16-le", "utf-16-be" or "latin-1"
    bom: bytes
    crlf: bool  # every newline is CRLF (a mixed file is treated as LF and left as is)


_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def sniff_encoding(head: bytes) -> tuple[str, bytes]:
    """(encoding, bom) from the first bytes of a file; UTF-8 unless a BOM says otherwise.

    Whether the rest is valid UTF-8 is decided later (``decode_bytes`` or line by line).
    """
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc, bom
    return "utf-8", b""


def decode_bytes(data: bytes) -> DecodedText:
    """Decode a whole file, detecting BOM, encoding and CRLF style."""
    enc, bom = sniff_encoding(data)
    body = data[len(bom) :]
    if enc == "utf-8":
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            enc, text = "latin-1", body.decode("latin-1")
    else:
        text = body.decode(enc, errors="replace")
    crlf_count = text.count("\r\n")
    crlf = crlf_count > 0 and crlf_count == text.count("\n")
    return DecodedText(text=text, encoding=enc, bom=bom, crlf=crlf)


def encode_text(text: str, encoding: str, bom: bytes = b"") -> tuple[bytes, str]:
    """Encode for writing; a latin-1 file that gains characters latin-1 lacks becomes UTF-8."""
    try:
        return bom + text.encode(encoding), encoding
    except UnicodeEncodeError:
        if encoding != "latin-1":
            raise
        return text.encode("utf-8"), "utf-8"


def format_line(number: int, line: str, total_chars: int | None = None) -> str:
    """One ``cat -n`` line: number right-aligned to width 6, a tab, the (possibly cut) line.

    ``total_chars`` is the real length when ``line`` holds only the head of a longer line.
    """
    total = len(line) if total_chars is None else total_chars
    if total > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}… [line truncated: {total} chars]"
    return f"{number:>6}\t{line}"


def number_lines(text: str, first: int = 1) -> str:
    """``cat -n`` of a block of text (LF or CRLF), numbering from ``first``."""
    return "\n".join(format_line(first + i, ln) for i, ln in enumerate(text.splitlines()))


def unified_diff(path: str, before: str, after: str, context: int = 3) -> str:
    """A unified diff of two texts (CRLF shown as LF) for the TUI and permission previews."""
    a = before.replace("\r\n", "\n").splitlines(keepends=True)
    b = after.replace("\r\n", "\n").splitlines(keepends=True)
    lines = []
    for line in difflib.unified_diff(a, b, fromfile=path, tofile=path, n=context):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)
