"""Ctrl+V in the app over a real session: a clipboard image (from a clipboard program on PATH)
becomes ``[Image #1]`` in the input and an image block in the request the server receives."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events

from agent_cli.testing import Scenario, Turn, text
from agent_cli.tui.clipboard import NO_TOOL
from agent_cli.tui.widgets.items import NoticeLine
from tests.agent_cli.tui.clipboard_fakes import fake_clipboard, png
from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.test_real_session import _app, project, serve  # noqa: F401


@pytest.fixture
def clip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., Path]:
    """A fake ``xclip`` first on PATH, holding what the test gives it."""

    def put(image: bytes | None = None, types: str = "") -> Path:
        bindir = fake_clipboard(tmp_path / "bin", "xclip", image=image, types=types)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
        return bindir

    return put


def _notices(app: Any) -> list[str]:
    return [n.notice_text for n in app.query(NoticeLine)]


async def test_ctrl_v_attaches_the_clipboard_image_to_the_next_prompt(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    clip: Callable[..., Path],
) -> None:
    data = png(7, 5)
    clip(image=data)
    server = serve(Scenario.of(Turn([text("A green rectangle.")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: app.prompt_input.text == "[Image #1]")
        await pilot.press(*" what is this?")
        assert app.prompt_input.text == "[Image #1] what is this?"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and bool(server.requests), timeout=15)
        assert app.pasted_images.images == {}  # sent: not attached to the next prompt again
    server.assert_done()
    blocks = server.requests[0].body["messages"][0]["content"]
    assert blocks[0] == {"type": "text", "text": "[Image #1] what is this?"}
    [image] = [b for b in blocks if b["type"] == "image"]
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == data


async def test_a_deleted_placeholder_sends_no_image(
    project: Path,  # noqa: F811
    serve: Any,  # noqa: F811
    clip: Callable[..., Path],
) -> None:
    clip(image=png())
    server = serve(Scenario.of(Turn([text("ok")])))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: app.prompt_input.text == "[Image #1]")
        app.prompt_input.load_text("never mind")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and bool(server.requests), timeout=15)
    server.assert_done()
    content = server.requests[0].body["messages"][0]["content"]
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    assert [b["type"] for b in blocks] == ["text"] and "never mind" in blocks[0]["text"]


async def test_ctrl_v_with_text_on_the_clipboard_leaves_the_paste_to_the_terminal(
    project: Path,  # noqa: F811
    clip: Callable[..., Path],
) -> None:
    bindir = clip(types="UTF8_STRING\nTEXT\n")
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        before = _notices(app)
        await pilot.press("ctrl+v")
        log = bindir / "calls.log"
        await wait_for(pilot, lambda: log.exists() and "TARGETS" in log.read_text())
        await pilot.pause()
        assert app.prompt_input.text == ""
        assert _notices(app) == before  # no note: the text is the terminal's to paste
        app.post_message(events.Paste("hello from the terminal"))  # as the driver posts it
        await wait_for(pilot, lambda: app.prompt_input.text == "hello from the terminal")
        assert app.pasted_images.images == {}


async def test_ctrl_v_without_a_clipboard_program_says_so(
    project: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    app = _app(project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: NO_TOOL in _notices(app))
        assert app.prompt_input.text == ""
