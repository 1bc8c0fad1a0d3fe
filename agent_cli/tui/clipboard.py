"""Ctrl+V: an image on the system clipboard, attached to the next prompt as ``[Image #N]``.

The image comes from the first clipboard program found on ``PATH``: ``wl-paste`` (Wayland;
tried first when ``WAYLAND_DISPLAY`` is set) or ``xclip`` on Linux, ``pngpaste`` or
``osascript`` on macOS. The input gets the placeholder ``[Image #N]`` (as in Claude Code); the
prompt sent with it carries the image as a base64 block, downscaled like a Read of an image. A
placeholder deleted before sending drops its image.

With text on the clipboard Nerve does nothing: the key goes on to the input's own paste and
the terminal's bracketed paste inserts the text as usual. Otherwise a note says why nothing
was pasted ("no image on the clipboard", "no clipboard tool found").
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import field
from typing import Any, Protocol

from tools.records import datarecord

__all__ = [
    "NO_IMAGE",
    "NO_TOOL",
    "ClipboardImage",
    "ClipboardMiss",
    "PastedImages",
    "paste_clipboard_image",
    "read_clipboard_image",
]

NO_IMAGE = "Nothing pasted: no image on the clipboard"
NO_TOOL = (
    "Nothing pasted: no clipboard tool found (install wl-clipboard or xclip; pngpaste on macOS)"
)
TIMEOUT_S = 5.0  # a clipboard owner that never answers must not hold the input
_PLACEHOLDER = re.compile(r"\[Image #(\d+)\]")
_TEXT_TYPES = ("text/", "UTF8_STRING", "STRING", "TEXT", "COMPOUND_TEXT")
_OSA = "get the clipboard as «class PNGf»"
_OSA_DATA = re.compile(r"«data PNGf([0-9A-Fa-f]*)»")


@datarecord(frozen=True, slots=True)
class _Tool:
    name: str
    image: tuple[str, ...]  # argv that writes the clipboard's PNG to stdout
    types: tuple[str, ...] = ()  # argv that lists the clipboard's types, one a line


_WL = _Tool(
    "wl-paste", ("wl-paste", "--no-newline", "--type", "image/png"), ("wl-paste", "--list-types")
)
_XCLIP = _Tool(
    "xclip",
    ("xclip", "-selection", "clipboard", "-t", "image/png", "-o"),
    ("xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"),
)
_MAC = (_Tool("pngpaste", ("pngpaste", "-")), _Tool("osascript", ("osascript", "-e", _OSA)))


@datarecord(frozen=True, slots=True)
class ClipboardImage:
    data: bytes
    media_type: str


@datarecord(frozen=True, slots=True)
class ClipboardMiss:
    """No image: ``note`` says why, or is None when the clipboard holds text (the terminal's
    paste is left to insert it)."""

    note: str | None


def _tools(platform: str, env: dict[str, str]) -> list[_Tool]:
    if platform == "darwin":
        candidates: Sequence[_Tool] = _MAC
    elif env.get("WAYLAND_DISPLAY"):
        candidates = (_WL, _XCLIP)
    else:
        candidates = (_XCLIP, _WL)
    path = env.get("PATH", os.defpath)
    return [t for t in candidates if shutil.which(t.name, path=path) is not None]


async def _run(argv: Sequence[str], env: dict[str, str]) -> tuple[int, bytes]:
    """The program's exit code and stdout; -1 when it could not run or did not finish."""
    exe = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if exe is None:
        return -1, b""
    try:
        proc = await asyncio.create_subprocess_exec(
            exe,
            *argv[1:],
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    except OSError:
        return -1, b""
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT_S)
    except TimeoutError:
        return -1, b""
    finally:
        if proc.returncode is None:  # timed out or cancelled: nothing is left running
            proc.kill()
            await proc.wait()
    return proc.returncode if proc.returncode is not None else -1, out


def _image_bytes(tool: _Tool, out: bytes) -> bytes:
    if tool.name != "osascript":
        return out
    m = _OSA_DATA.search(out.decode("utf-8", "replace"))
    return bytes.fromhex(m.group(1)) if m else b""


async def read_clipboard_image(
    *, platform: str = sys.platform, env: dict[str, str] | None = None
) -> ClipboardImage | ClipboardMiss:
    """The clipboard's image, or why there is none (module docstring)."""
    from tools.builtin._read_formats import MAX_IMAGE_FILE_BYTES, image_media_type

    env = dict(os.environ if env is None else env)
    tools = _tools(platform, env)
    if not tools:
        return ClipboardMiss(NO_TOOL)
    text = False
    for tool in tools:
        code, out = await _run(tool.image, env)
        data = _image_bytes(tool, out) if code == 0 else b""
        media = image_media_type(data[:16])
        if media is not None and len(data) <= MAX_IMAGE_FILE_BYTES:
            return ClipboardImage(data, media)
        if media is not None:
            return ClipboardMiss(
                f"Nothing pasted: the clipboard image is over {MAX_IMAGE_FILE_BYTES >> 20} MiB"
            )
        if tool.types:
            code, listed = await _run(tool.types, env)
            types = listed.decode("utf-8", "replace").split() if code == 0 else []
            text = text or any(t.startswith(_TEXT_TYPES) for t in types)
    return ClipboardMiss(None if text else NO_IMAGE)


@datarecord
class PastedImages:
    """Images pasted into the input, by placeholder number, until a prompt sends them."""

    images: dict[int, dict[str, Any]] = field(default_factory=dict)
    last: int = 0

    def add(self, block: dict[str, Any]) -> str:
        """Keep ``block``; return its placeholder."""
        self.last += 1
        self.images[self.last] = block
        return f"[Image #{self.last}]"

    def take(self, prompt: str) -> list[dict[str, Any]]:
        """The image blocks whose placeholders ``prompt`` holds, in order, each once; they are
        forgotten here (sent)."""
        taken: list[dict[str, Any]] = []
        for m in _PLACEHOLDER.finditer(prompt):
            block = self.images.pop(int(m.group(1)), None)
            if block is not None:
                taken.append(block)
        return taken


class _Host(Protocol):
    pasted_images: PastedImages

    def say(self, text: str, level: str = "info") -> None: ...


async def paste_clipboard_image(host: _Host) -> str | None:
    """Ctrl+V: the placeholder to insert, "" when a note was shown instead, or None to leave
    the key to the input's own paste (text on the clipboard)."""
    from tools.builtin._read_formats import read_image

    got = await read_clipboard_image()
    if isinstance(got, ClipboardMiss):
        if got.note is None:
            return None
        host.say(got.note, "warning")
        return ""
    try:
        sent = await asyncio.to_thread(read_image, got.data, got.media_type)
    except Exception as exc:  # a damaged image: say so, keep the input as it is
        host.say(f"Nothing pasted: the clipboard image could not be read ({exc})", "warning")
        return ""
    return host.pasted_images.add(dict(sent.block))
