"""AskUserQuestion's modal: one question at a time, answered from the keyboard.

Keys: Up/Down move, Enter chooses the highlighted option (multi-select: confirms the ticked
ones), Space ticks an option of a multi-select question, 1-5 pick an option directly, the last
option "Other" opens a text field (Enter sends what was typed, Esc goes back to the options),
Left goes back to the previous question, Esc declines. The answers go back to the tool as a
``QuestionResponse`` once the last question is answered. Like the permission prompt, keys are
ignored for ``guard_s`` seconds after it appears, so typing meant for the input never answers.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from agent_cli.tui.safe import clean, plain_text
from agent_cli.tui.screens.guard import GuardedModal
from tools.questions import OTHER_LABEL, Question, QuestionPrompt, QuestionResponse

__all__ = ["QuestionScreen", "ask_questions_in_modal"]


class QuestionScreen(GuardedModal[QuestionResponse]):
    """Asks ``prompt``'s questions in order; dismisses with the answers (or declined)."""

    DEFAULT_CSS = """
    QuestionScreen { align: center middle; }
    #q-box { width: 90%; height: auto; max-height: 90%; border: round $accent;
             background: $panel; padding: 0 1; }
    #q-title { text-style: bold; }
    #q-options { margin: 1 0 0 0; }
    #q-other { margin: 1 0 0 0; }
    #q-help { margin: 1 0 0 0; color: $text-muted; }
    """

    AUTO_FOCUS = None  # the keys belong to the options; the text field takes focus when opened
    BINDINGS = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("enter", "choose", show=False),
        Binding("space", "tick", show=False),
        Binding("left", "back", show=False),
        Binding("escape", "cancel", show=False),
        *(Binding(str(n), f"pick({n - 1})", show=False) for n in range(1, 6)),
    ]

    def __init__(self, prompt: QuestionPrompt, *, guard_s: float = 0.5) -> None:
        super().__init__(guard_s=guard_s)
        self.prompt = prompt
        self.index = 0
        self.selected = 0
        self.ticked: set[int] = set()
        self.answers: dict[str, str] = {}
        self._title = Static("", markup=False, id="q-title")
        self._question = Static("", markup=False, id="q-question")
        self._options = Static("", markup=False, id="q-options")
        # Disabled while hidden: a hidden field must never take focus (and with it the keys).
        self._other = Input(
            placeholder="Type your answer, Enter to send", id="q-other", disabled=True
        )
        self._help = Static("", markup=False, id="q-help")

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="q-box"):
            yield self._title
            yield self._question
            yield self._options
            yield self._other
            yield self._help

    def on_mount(self) -> None:
        self._start_guard()
        self._show()

    @property
    def question(self) -> Question:
        return self.prompt.questions[self.index]

    @property
    def labels(self) -> list[str]:
        return [o.label for o in self.question.options] + [OTHER_LABEL]

    @property
    def other_index(self) -> int:
        return len(self.question.options)

    def _show(self) -> None:
        q, total = self.question, len(self.prompt.questions)
        who = f"  ·  asked by {self.prompt.agent_id}" if self.prompt.agent_id else ""
        count = f"  ·  question {self.index + 1} of {total}" if total > 1 else ""
        # The model wrote the question and its options: text only, no control sequences.
        self._title.update(plain_text(f"[{q.header}]{count}{who}"))
        self._question.update(plain_text(q.question))
        self._hide_other()
        self._render_options()
        pick = "Space tick · Enter confirm" if q.multi_select else "Enter choose"
        back = " · ← previous" if self.index else ""
        self._help.update(Text(f"↑↓ move · {pick} · 1-{len(self.labels)} pick{back} · Esc decline"))

    def _render_options(self) -> None:
        out = Text()
        for i, label in enumerate(self.labels):
            here = i == self.selected
            box = ("[x] " if i in self.ticked else "[ ] ") if self.question.multi_select else ""
            shown = "Other (type your answer)" if i == self.other_index else label
            out.append(
                f"{'❯' if here else ' '} {i + 1}. {box}{clean(shown)}\n",
                style="bold" if here else "",
            )
            if i < self.other_index and self.question.options[i].description:
                out.append(f"      {clean(self.question.options[i].description)}\n", style="dim")
        self._options.update(out)

    # -- answering -------------------------------------------------------------------------

    def _blocked(self) -> bool:
        return self._guarded() or self._other.has_focus

    def action_move(self, delta: int) -> None:
        if self._blocked():
            return
        self.selected = (self.selected + delta) % len(self.labels)
        self._render_options()

    def action_pick(self, i: int) -> None:
        if self._blocked() or i >= len(self.labels):
            return
        self.selected = i
        if self.question.multi_select:
            self._tick(i)
        else:
            self._choose_single(i)

    def action_tick(self) -> None:
        if self._blocked():
            return
        if self.question.multi_select:
            self._tick(self.selected)
        else:
            self._choose_single(self.selected)

    def action_choose(self) -> None:
        if self._blocked():
            return
        if not self.question.multi_select:
            self._choose_single(self.selected)
            return
        if not self.ticked:
            self._tick(self.selected)
            if self._other.display:
                return
        self._answer(", ".join(self.labels[i] for i in sorted(self.ticked)))

    def action_back(self) -> None:
        if self._blocked() or self.index == 0:
            return
        self.index -= 1
        self.answers.pop(self.question.question, None)
        self._reset()

    def action_cancel(self) -> None:
        if self._guarded():
            return
        if self._other.has_focus:  # Esc in the text field: back to the options
            self._hide_other()
            self.ticked.discard(self.other_index)
            self._render_options()
            return
        self.dismiss(QuestionResponse(declined=True))

    def _tick(self, i: int) -> None:
        if i == self.other_index:
            self._open_other()
            return
        self.ticked.symmetric_difference_update({i})
        self._render_options()

    def _choose_single(self, i: int) -> None:
        if i == self.other_index:
            self._open_other()
        else:
            self._answer(self.labels[i])

    def _open_other(self) -> None:
        self._other.disabled = False
        self._other.display = True
        self._other.focus()

    def _hide_other(self) -> None:
        self._other.display = False
        self._other.disabled = True
        self._other.value = ""

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._guarded():
            return
        typed = event.value.strip()
        if not typed:
            return
        chosen = [self.labels[i] for i in sorted(self.ticked) if i != self.other_index]
        self._answer(", ".join([*chosen, typed]))

    def _answer(self, answer: str) -> None:
        self.answers[self.question.question] = answer
        if self.index + 1 >= len(self.prompt.questions):
            self.dismiss(QuestionResponse(answers=dict(self.answers)))
            return
        self.index += 1
        self._reset()

    def _reset(self) -> None:
        self.selected = 0
        self.ticked = set()
        self._show()


async def ask_questions_in_modal(
    app: App[Any], prompt: QuestionPrompt, guard_s: float
) -> QuestionResponse:
    """Show the questions over ``app`` and wait for the answers (a cancelled wait declines)."""
    answer: asyncio.Future[QuestionResponse] = asyncio.get_running_loop().create_future()

    def done(response: QuestionResponse | None) -> None:
        if not answer.done():
            answer.set_result(response or QuestionResponse(declined=True))

    screen = QuestionScreen(prompt, guard_s=guard_s)
    # A future, not push_screen_wait: the tool runs in the loop's task, not a Textual worker.
    app.push_screen(screen, done)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_current:
            screen.dismiss(QuestionResponse(declined=True))
        raise
