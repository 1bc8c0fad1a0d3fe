"""A small modal list: pick one option with the arrows and Enter, or Esc to cancel."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

__all__ = ["ChoiceScreen"]


class ChoiceScreen(ModalScreen[int | None]):
    """Dismisses with the chosen option's index, or None on Esc."""

    BINDINGS = [Binding("escape", "cancel", show=False)]
    DEFAULT_CSS = """
    ChoiceScreen { align: center middle; }
    #choice-box { width: 90%; max-width: 110; height: auto; border: round $accent;
                  padding: 0 1; background: $surface; }
    #choice-list { height: auto; max-height: 16; }
    """

    def __init__(self, title: str, options: list[str], initial: int = 0) -> None:
        super().__init__()
        self.title_text = title
        self.options = options
        self.initial = initial if 0 <= initial < len(options) else 0

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            yield Static(f"{self.title_text}  (Enter to choose, Esc to cancel)", markup=False)
            yield OptionList(*[Option(o) for o in self.options], id="choice-list", markup=False)

    def on_mount(self) -> None:
        olist = self.query_one("#choice-list", OptionList)
        if self.options:
            olist.highlighted = self.initial
        olist.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_index)

    def action_cancel(self) -> None:
        self.dismiss(None)
