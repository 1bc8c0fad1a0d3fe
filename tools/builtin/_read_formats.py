"""Read of the non-text formats: images, PDFs, Jupyter notebooks and directories.

Pillow, pypdf and nbformat are imported inside the functions that need them: most sessions
never read an image, and their import cost should not land on the first frame.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
from pathlib import Path
from typing import Any

from tools.messages import ResultBlock
from tools.records import datarecord

__all__ = [
    "MAX_PDF_PAGES_PER_CALL",
    "MAX_PDF_PAGES_WITHOUT_RANGE",
    "image_media_type",
    "list_directory",
    "parse_pages",
    "read_image",
    "read_notebook",
    "read_pdf",
]

MAX_IMAGE_SIDE = 1568
MAX_IMAGE_BYTES = 3_750_000
MAX_IMAGE_FILE_BYTES = 64 * 1024 * 1024
MAX_PDF_PAGES_PER_CALL = 20
MAX_PDF_PAGES_WITHOUT_RANGE = 10
MAX_DIR_ENTRIES = 1000
MAX_NOTEBOOK_OUTPUT_CHARS = 10_000


def image_media_type(head: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP from its magic bytes, else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _image_block(data: bytes, media_type: str) -> ResultBlock:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }


@datarecord(frozen=True, slots=True)
class ImageRead:
    """An image as the model will see it, and how it was changed on the way."""

    block: ResultBlock
    original_size: tuple[int, int] | None
    sent_size: tuple[int, int] | None
    sent_bytes: int
    downscaled: bool


def read_image(data: bytes, media_type: str) -> ImageRead:
    """Return the image as a base64 block, downscaled when a side or the size is too big."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        size = img.size
        if max(size) <= MAX_IMAGE_SIDE and len(data) <= MAX_IMAGE_BYTES:
            return ImageRead(_image_block(data, media_type), size, size, len(data), False)
        img.load()
        scale = min(1.0, MAX_IMAGE_SIDE / max(size))
        new_size = (max(1, round(size[0] * scale)), max(1, round(size[1] * scale)))
        small = img.resize(new_size, Image.Resampling.LANCZOS) if scale < 1 else img.copy()
    out, out_type = _encode_image(small, media_type)
    # Still too heavy (a noisy photo as PNG): JPEG at falling quality, then smaller sides.
    quality = 85
    while len(out) > MAX_IMAGE_BYTES and quality >= 40:
        out, out_type = _encode_image(small, "image/jpeg", quality)
        quality -= 15
    while len(out) > MAX_IMAGE_BYTES and min(small.size) > 16:
        small = small.resize((small.size[0] // 2, small.size[1] // 2))
        out, out_type = _encode_image(small, "image/jpeg", 60)
    return ImageRead(_image_block(out, out_type), size, small.size, len(out), True)


def _encode_image(img: Any, media_type: str, quality: int = 85) -> tuple[bytes, str]:
    buf = io.BytesIO()
    if media_type == "image/jpeg":
        if img.mode not in ("RGB", "L"):
            img = img.convert("RGB")
        img.save(buf, format="JPEG", quality=quality, optimize=True)
        return buf.getvalue(), "image/jpeg"
    # GIF and WebP are re-encoded as PNG: a still frame, lossless, accepted everywhere.
    if img.mode == "P":
        img = img.convert("RGBA")
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue(), "image/png"


_PAGES = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_pages(spec: str) -> tuple[int, int] | str:
    """``"3"`` or ``"1-5"`` -> (first, last), 1-based inclusive; or an error message."""
    m = _PAGES.match(spec)
    if not m:
        return f'Invalid pages "{spec}": use a page number like "3" or a range like "1-5".'
    first = int(m.group(1))
    last = int(m.group(2) or first)
    if first < 1 or last < first:
        return f'Invalid pages "{spec}": pages are numbered from 1 and the range must ascend.'
    if last - first + 1 > MAX_PDF_PAGES_PER_CALL:
        return (
            f'Pages "{spec}" asks for {last - first + 1} pages; at most '
            f"{MAX_PDF_PAGES_PER_CALL} pages can be read in one call."
        )
    return first, last


def read_pdf(path: Path, pages: str | None) -> tuple[str, bool]:
    """Text of a PDF page by page, as (text, is_error)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        n_pages = len(reader.pages)
    except (PdfReadError, OSError, ValueError) as exc:
        return f"Could not read PDF {path}: {exc}", True
    if pages is None:
        if n_pages > MAX_PDF_PAGES_WITHOUT_RANGE:
            return (
                f"This PDF has {n_pages} pages, too many to read at once. Use the pages "
                f'parameter to read specific ranges (e.g. pages: "1-5"; at most '
                f"{MAX_PDF_PAGES_PER_CALL} pages per call).",
                True,
            )
        first, last = 1, n_pages
    else:
        parsed = parse_pages(pages)
        if isinstance(parsed, str):
            return parsed, True
        first, last = parsed
        if first > n_pages:
            return f"Page {first} is out of range: this PDF has {n_pages} pages.", True
        last = min(last, n_pages)
    parts = [f"PDF {path}: pages {first}-{last} of {n_pages}"]
    for number in range(first, last + 1):
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except Exception as exc:  # a broken page must not lose the others
            text = f"(could not extract text: {type(exc).__name__})"
        parts.append(f"--- Page {number} ---\n{text.strip() or '(no extractable text)'}")
    return "\n\n".join(parts), False


def _cell_id(cell: Any, index: int) -> str:
    return str(cell.get("id") or f"cell-{index}")


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _clip(text: str) -> str:
    if len(text) <= MAX_NOTEBOOK_OUTPUT_CHARS:
        return text
    return text[:MAX_NOTEBOOK_OUTPUT_CHARS] + f"\n… [output truncated: {len(text)} chars]"


def _output_blocks(output: Any) -> list[ResultBlock]:
    kind = output.get("output_type")
    if kind == "stream":
        return [{"type": "text", "text": _clip(_joined(output.get("text", "")))}]
    if kind == "error":
        tb = (
            "\n".join(output.get("traceback", []))
            or f"{output.get('ename')}: {output.get('evalue')}"
        )
        return [{"type": "text", "text": _clip(re.sub(r"\x1b\[[0-9;]*m", "", tb))}]
    blocks: list[ResultBlock] = []
    data = output.get("data", {})
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            raw = data[mime]
            b64 = "".join(raw) if isinstance(raw, list) else str(raw)
            blocks.append(
                {"type": "image", "source": {"type": "base64", "media_type": mime, "data": b64}}
            )
    if "text/plain" in data:
        blocks.append({"type": "text", "text": _clip(_joined(data["text/plain"]))})
    elif "application/json" in data:
        blocks.append({"type": "text", "text": _clip(json.dumps(data["application/json"]))})
    return blocks


def read_notebook(data: bytes) -> list[ResultBlock]:
    """A notebook as content blocks: each cell (id, type, source) then its outputs."""
    import nbformat

    nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    lang = nb.metadata.get("language_info", {}).get("name", "python")
    blocks: list[ResultBlock] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            blocks.append({"type": "text", "text": "\n".join(texts)})
            texts.clear()

    for index, cell in enumerate(nb.cells):
        cid, ctype = _cell_id(cell, index), cell.get("cell_type", "code")
        extra = f' language="{lang}"' if ctype == "code" else ""
        texts.append(f'<cell id="{cid}" type="{ctype}"{extra}>\n{_joined(cell.source)}\n</cell>')
        for output in cell.get("outputs", []):
            for block in _output_blocks(output):
                if block["type"] == "text":
                    texts.append(f'<output cell="{cid}">\n{block["text"]}\n</output>')
                else:
                    flush()
                    blocks.append(block)
    flush()
    if not blocks:
        blocks.append({"type": "text", "text": "(the notebook has no cells)"})
    return blocks


def list_directory(path: Path) -> str:
    """A sorted listing of a directory (``/`` after subdirectories), capped."""
    names: list[str] = []
    with os.scandir(path) as it:
        for entry in it:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            names.append(entry.name + ("/" if is_dir else ""))
    names.sort()
    shown = names[:MAX_DIR_ENTRIES]
    head = f"{path} is a directory ({len(names)} entries); its listing:"
    body = "\n".join(shown) if shown else "(empty directory)"
    tail = ""
    if len(names) > len(shown):
        tail = f"\n… and {len(names) - len(shown)} more entries (use Glob or Bash ls to see them)"
    return f"{head}\n{body}{tail}"
