"""``/config`` in the app: the effective settings with their files, and a few that Enter
changes, written to the user settings file (``agent_cli.slash.settings_view``)."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.slash.settings_view import (
    TOGGLES,
    Toggle,
    apply_toggle,
    layer_sources,
    next_value,
    setting_rows,
    toggle_value,
)
from agent_cli.tui.safe import clean, plain_text

__all__ = ["ConfigScreen"]


class ConfigScreen(ModalScreen[None]):
    """The settings; Enter on a highlighted toggle cycles it and saves it; Esc closes."""

    BINDINGS = [Binding("escape", "close", show=False)]
    DEFAULT_CSS = """
    ConfigScreen { align: center middle; }
    #config-box { width: 90%; max-width: 120; height: auto; max-height: 90%;
                  border: round $accent; padding: 0 1; background: $surface; }
    #config-toggles { height: auto; max-height: 8; }
    #config-all { height: auto; max-height: 14; margin: 1 0 0 0; color: $text-muted; }
    #config-message { margin: 1 0 0 0; }
    """

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session
        self.loaded = getattr(session, "settings", None)
        self.values: dict[str, Any] = {t.dotted: toggle_value(self.loaded, t) for t in TOGGLES}
        self.where: dict[str, str] = {}
        for t in TOGGLES:
            sources = layer_sources(self.loaded, t.keys)
            self.where[t.dotted] = f"from {sources[0]}" if sources else "not set"
        self.message = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="config-box"):
            yield Static("Settings  (Enter changes the highlighted one · Esc closes)", markup=False)
            yield OptionList(*self._toggle_options(), id="config-toggles", markup=False)
            with VerticalScroll(id="config-all"):
                yield Static(plain_text(self._all_text()), id="config-rows", markup=False)
            yield Static("", id="config-message", markup=False)

    def on_mount(self) -> None:
        self.query_one("#config-toggles", OptionList).focus()

    def _toggle_label(self, toggle: Toggle) -> str:
        value = json.dumps(self.values[toggle.dotted])
        return clean(f"{toggle.label}: {value}  ({self.where[toggle.dotted]})")

    def _toggle_options(self) -> list[Option]:
        return [Option(self._toggle_label(t), id=t.dotted) for t in TOGGLES]

    def _all_text(self) -> str:
        rows = setting_rows(self.loaded)
        lines = [r.text() for r in rows] or ["No settings set (every value is the default)."]
        return "\n".join(["Effective settings (highest-precedence file first):", *lines])

    def toggle_labels(self) -> list[str]:
        """What the toggle list shows, one line per toggle."""
        return [self._toggle_label(t) for t in TOGGLES]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        toggle = TOGGLES[event.option_index]
        self.change(toggle)

    def change(self, toggle: Toggle) -> None:
        """Cycle ``toggle`` to its next value and save it to the user settings file."""
        from config import SettingsError

        value = next_value(toggle, self.values[toggle.dotted])
        try:
            self.message = apply_toggle(self.loaded, toggle, value, self._environ())
        except (SettingsError, OSError, ValueError) as exc:
            self.message = f"Not saved: {exc}"
            self._show(error=True)
            return
        self.values[toggle.dotted] = value
        if toggle.effect == "now":
            from agent_cli.tui.preferences import apply_preferences

            apply_preferences(self.app, self.session)
        self.where[toggle.dotted] = "saved to user settings"
        olist = self.query_one("#config-toggles", OptionList)
        index = TOGGLES.index(toggle)
        olist.replace_option_prompt_at_index(index, self._toggle_label(toggle))
        self._show(error=False)

    def _show(self, *, error: bool) -> None:
        self.query_one("#config-message", Static).update(
            plain_text(self.message, style="red" if error else "")
        )
        say = getattr(self.app, "say", None)
        if say is not None:
            say(self.message, "error" if error else "info")

    def _environ(self) -> Any:
        options = getattr(getattr(self.session, "ctx", None), "options", None)
        return getattr(options, "environ", None)

    def action_close(self) -> None:
        self.dismiss(None)
