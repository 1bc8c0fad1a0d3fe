"""Toasts (``App.notify``) above the prompt input, never over it.

Textual docks its toast rack at the bottom of the screen, where our input is; a toast there hid
the input's border (issue 21: "the Ctrl+D toast covers the input border"). After every layout
of the screen the rack's bottom margin is set to end where the input begins, so toasts stack
upwards from just above the input however tall the input grows.
"""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget

__all__ = ["RACK_ID", "keep_toasts_above"]

RACK_ID = "textual-toastrack"  # the id Textual gives every screen's toast rack


def keep_toasts_above(screen: Screen[Any], widget: Widget) -> None:
    """Keep ``screen``'s toasts above ``widget`` (re-placed after each layout of the screen)."""

    def place(_: Screen[Any]) -> None:
        # Under a modal screen the input has no region to measure (and toasts show on the
        # modal's own rack): placing then would flip the margin at every layout.
        if not screen.is_current or not widget.is_attached or not widget.display:
            return
        if not widget.region.height:
            return
        try:
            rack = screen.query_one(f"#{RACK_ID}")
        except NoMatches:
            return
        bottom = max(screen.size.height - widget.region.y, 0)
        if rack.styles.margin.bottom != bottom:  # only a change lays out again: no loop
            rack.styles.margin = (0, 0, bottom, 0)

    screen.screen_layout_refresh_signal.subscribe(screen, place)
    place(screen)
