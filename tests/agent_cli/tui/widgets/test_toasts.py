"""Toasts never cover the prompt input (issue 21: "the Ctrl+D toast covers the input border")."""

from __future__ import annotations

from typing import Any

from textual.widgets._toast import Toast

from tests.agent_cli.tui.conftest import SIZE, wait_for
from tests.agent_cli.tui.fakes import FakeSession


def _toasts(app: Any) -> list[Toast]:
    return list(app.screen.query(Toast))


async def test_the_ctrl_d_toast_sits_above_the_input(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: _toasts(app))
        await pilot.pause()
        (toast,) = _toasts(app)
        box = app.prompt_input.region
        assert "Ctrl+D again" in str(toast.render())
        assert toast.region.height > 0 and not toast.region.overlaps(box)
        # directly above the input, not somewhere at the top
        assert toast.region.bottom == box.y


async def test_a_taller_input_pushes_the_toasts_up(session: FakeSession, make_app: Any) -> None:
    app = make_app(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.notify("first", timeout=30)
        app.notify("second", timeout=30)
        await wait_for(pilot, lambda: len(_toasts(app)) == 2)
        await pilot.pause()
        short = app.prompt_input.region
        app.prompt_input.load_text("\n".join(f"line {i}" for i in range(8)))
        await wait_for(pilot, lambda: app.prompt_input.region.height > short.height)
        await pilot.pause()
        box = app.prompt_input.region
        for toast in _toasts(app):
            assert not toast.region.overlaps(box), (toast.region, box)
            assert toast.region.bottom <= box.y
        assert max(t.region.bottom for t in _toasts(app)) == box.y


async def test_a_modal_screen_leaves_the_toast_place_alone(
    session: FakeSession, make_app: Any
) -> None:
    from textual.screen import ModalScreen
    from textual.widgets import Static

    from agent_cli.tui.widgets.toasts import RACK_ID

    class Modal(ModalScreen[None]):
        def compose(self) -> Any:
            yield Static("modal")

    app = make_app(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        main = app.screen
        rack = main.query_one(f"#{RACK_ID}")
        await pilot.pause()
        placed = rack.styles.margin.bottom
        assert placed == SIZE[1] - app.prompt_input.region.y
        await app.push_screen(Modal())
        await pilot.pause()
        main.refresh(layout=True)  # the main screen lays out again under the modal
        await pilot.pause()
        assert rack.styles.margin.bottom == placed
        app.pop_screen()
        await pilot.pause()
        app.notify("after the modal", timeout=30)
        await wait_for(pilot, lambda: _toasts(app))
        await pilot.pause()
        (toast,) = _toasts(app)
        assert toast.region.bottom == app.prompt_input.region.y
