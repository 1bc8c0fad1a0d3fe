"""Reading an image from the clipboard through real (fake) clipboard programs on PATH."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from agent_cli.tui import clipboard
from agent_cli.tui.clipboard import (
    NO_IMAGE,
    NO_TOOL,
    ClipboardImage,
    ClipboardMiss,
    PastedImages,
    read_clipboard_image,
)
from tests.agent_cli.tui.clipboard_fakes import fake_clipboard, png


def _env(bindir: Path, **extra: str) -> dict[str, str]:
    return {"PATH": str(bindir), **extra}


def _calls(bindir: Path) -> list[str]:
    log = bindir / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


async def test_xclip_gives_the_png_on_the_clipboard(tmp_path: Path) -> None:
    data = png()
    bindir = fake_clipboard(tmp_path / "bin", "xclip", image=data, types="TARGETS\nimage/png\n")
    got = await read_clipboard_image(platform="linux", env=_env(bindir))
    assert got == ClipboardImage(data, "image/png")
    assert _calls(bindir) == ["xclip -selection clipboard -t image/png -o"]


async def test_text_on_the_clipboard_is_left_to_the_terminal(tmp_path: Path) -> None:
    bindir = fake_clipboard(tmp_path / "bin", "xclip", types="TARGETS\nUTF8_STRING\nTEXT\n")
    got = await read_clipboard_image(platform="linux", env=_env(bindir))
    assert got == ClipboardMiss(None)
    assert _calls(bindir)[-1] == "xclip -selection clipboard -t TARGETS -o"


async def test_an_empty_clipboard_says_so(tmp_path: Path) -> None:
    bindir = fake_clipboard(tmp_path / "bin", "xclip")
    assert await read_clipboard_image(platform="linux", env=_env(bindir)) == ClipboardMiss(NO_IMAGE)


async def test_no_clipboard_program_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for platform in ("linux", "darwin"):
        got = await read_clipboard_image(platform=platform, env=_env(tmp_path / "empty"))
        assert got == ClipboardMiss(NO_TOOL)


async def test_wayland_asks_wl_paste_first(tmp_path: Path) -> None:
    data = png()
    bindir = fake_clipboard(tmp_path / "bin", "xclip", "wl-paste", image=data)
    got = await read_clipboard_image(platform="linux", env=_env(bindir, WAYLAND_DISPLAY="w-0"))
    assert got == ClipboardImage(data, "image/png")
    assert _calls(bindir) == ["wl-paste --no-newline --type image/png"]
    (bindir / "calls.log").unlink()
    await read_clipboard_image(platform="linux", env=_env(bindir))  # X11: xclip first
    assert _calls(bindir) == ["xclip -selection clipboard -t image/png -o"]


async def test_macos_osascript_hex_data_is_decoded(tmp_path: Path) -> None:
    data = png(3, 3)
    bindir = fake_clipboard(tmp_path / "bin", "osascript", image=data)
    got = await read_clipboard_image(platform="darwin", env=_env(bindir))
    assert got == ClipboardImage(data, "image/png")
    (bindir / "clip.png").unlink()
    got = await read_clipboard_image(platform="darwin", env=_env(bindir))
    assert got == ClipboardMiss(NO_IMAGE)


async def test_a_program_that_never_answers_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clipboard, "TIMEOUT_S", 0.5)
    bindir = fake_clipboard(tmp_path / "bin", "xclip", image=png())
    (bindir / "hang").touch()
    got = await read_clipboard_image(platform="linux", env=_env(bindir))
    assert got == ClipboardMiss(NO_IMAGE)


async def test_bytes_that_are_not_an_image_are_not_pasted(tmp_path: Path) -> None:
    bindir = fake_clipboard(tmp_path / "bin", "xclip", image=b"not a png at all")
    got = await read_clipboard_image(platform="linux", env=_env(bindir))
    assert got == ClipboardMiss(NO_IMAGE)


def test_a_prompt_takes_the_images_whose_placeholders_it_still_has() -> None:
    store = PastedImages()
    blocks = [{"type": "image", "n": i} for i in range(3)]
    assert [store.add(b) for b in blocks] == ["[Image #1]", "[Image #2]", "[Image #3]"]
    assert store.take("see [Image #3] and [Image #1] and [Image #3]") == [blocks[2], blocks[0]]
    assert store.take("[Image #1] again") == []  # sent already
    assert store.take("[Image #2]") == [blocks[1]]
    assert store.add(blocks[0]) == "[Image #4]"  # numbers are never reused


def test_the_base64_block_round_trips() -> None:
    from tools.builtin._read_formats import read_image

    data = png()
    block = read_image(data, "image/png").block
    assert base64.b64decode(block["source"]["data"]) == data
