"""The /rewind picker (also Esc Esc on an empty prompt), and carrying out the choice.

First the prompts of the conversation, newest at the bottom and highlighted; Enter picks one.
Then what would change — the messages that would go and, file by file, what restoring the code
would do — and the choices: code and conversation, conversation only, code only, or never mind.
Nothing changes until a choice is made; Esc goes back, or out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.slash.context_view import change_lines, rewind_summary
from tools.records import datarecord

__all__ = ["CHOICES", "RewindChoice", "RewindScreen", "apply_rewind"]

# (label, restore the conversation, restore the files)
CHOICES: tuple[tuple[str, bool, bool], ...] = (
    ("Restore code and conversation", True, True),
    ("Restore conversation", True, False),
    ("Restore code", False, True),
    ("Never mind", False, False),
)


@datarecord(frozen=True, slots=True)
class RewindChoice:
    message_id: str
    conversation: bool
    files: bool


def _label(text: str, width: int = 90) -> str:
    first = " ".join(text.split()) or "(empty prompt)"
    return first if len(first) <= width else first[: width - 1] + "…"


class RewindScreen(ModalScreen[RewindChoice | None]):
    """Pick a prompt, see what would change, choose what to restore (see module docstring)."""

    BINDINGS = [Binding("escape", "back", show=False)]

    def __init__(self, points: list[Any], preview: Callable[[str], Any]) -> None:
        super().__init__()
        self.points = points
        self.preview_of = preview
        self.chosen: Any = None  # the RewindPoint picked, in the second step
        self.preview: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-box"):
            yield Static("", id="rewind-title", markup=False)
            yield Static("", id="rewind-summary", markup=False)
            yield OptionList(id="rewind-list", markup=False)

    def on_mount(self) -> None:
        self._show_points()

    def _show_points(self) -> None:
        self.chosen = self.preview = None
        self.query_one("#rewind-title", Static).update(
            "Rewind to before which prompt? (Enter to pick, Esc to cancel)"
        )
        self.query_one("#rewind-summary", Static).update("")
        self.query_one("#rewind-summary", Static).display = False
        olist = self.query_one("#rewind-list", OptionList)
        olist.clear_options()
        olist.add_options([Option(_label(p.text)) for p in self.points])
        olist.highlighted = len(self.points) - 1 if self.points else None
        olist.focus()

    def _show_choices(self, point: Any) -> None:
        self.chosen = point
        self.preview = self.preview_of(point.message_id)
        self.query_one("#rewind-title", Static).update(f"Rewind to before: {_label(point.text)}")
        summary = self.query_one("#rewind-summary", Static)
        summary.update(rewind_summary(self.preview, conversation=True, files=True))
        summary.display = True
        olist = self.query_one("#rewind-list", OptionList)
        olist.clear_options()
        olist.add_options([Option(label) for label, _, _ in CHOICES])
        olist.highlighted = 0
        olist.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.chosen is None:
            self._show_choices(self.points[event.option_index])
            return
        _, conversation, files = CHOICES[event.option_index]
        if not (conversation or files):
            self.dismiss(None)
            return
        self.dismiss(RewindChoice(self.chosen.message_id, conversation, files))

    def action_back(self) -> None:
        if self.chosen is not None:
            self._show_points()
        else:
            self.dismiss(None)


async def apply_rewind(app: Any, choice: RewindChoice) -> None:
    """Carry out ``choice`` in ``app`` (a ``NerveApp``) and say what changed."""
    from agent_cli.tui.widgets.conversation import stored_entries

    try:
        result = app.session.rewind(
            choice.message_id, conversation=choice.conversation, files=choice.files
        )
    except Exception as exc:
        app.say(f"Could not rewind: {exc}", "error")
        return
    lines = []
    if choice.conversation:
        messages = getattr(app.session, "conversation_messages", None)
        await app.conversation.load(stored_entries(app, messages() if callable(messages) else []))
        app.prompt_input.load_text(result.prompt)  # the prompt, back for editing
        lines.append(f"Rewound the conversation ({result.messages_removed} messages removed).")
    if choice.files:
        done = [c for c in result.files if c.action != "unrestorable"]
        lines.append(
            f"Restored {len(done)} file{'s' if len(done) != 1 else ''}."
            if done
            else "No files needed restoring."
        )
        lines += change_lines(result.files)
    for error in result.errors:
        lines.append(f"  could not restore {error}")
    app.say("\n".join(lines), "warning" if result.errors else "info")
    app.refresh_status()
