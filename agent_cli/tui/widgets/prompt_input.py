"""The prompt: Enter sends; Ctrl+J, Shift+Enter or ``\\``+Enter break the line; Up/Down history.

Completion (``/`` commands, ``@`` paths) shows in a ``CompletionList`` above the prompt; while it
is open, Up/Down move in it, Tab or Enter take the highlighted item, Esc closes it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from textual import events
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from agent_cli.tui.completion import Completion
from agent_cli.tui.safe import clean
from agent_cli.tui.widgets.history_search import HistorySearch, search_title
from agent_cli.tui.widgets.paste import PastedTexts, is_big_paste, pasted_text
from tools.records import datarecord

__all__ = ["CompletionList", "PromptInput"]

CompletionSource = Callable[[str, int], list[Completion]]
# Ctrl+V: the placeholder to insert, "" if handled without one, None to leave the key alone
ImagePaster = Callable[[], Awaitable[str | None]]


class CompletionList(OptionList, can_focus=False):
    """Suggestions for the word at the cursor; never takes focus from the prompt."""

    def __init__(self) -> None:
        super().__init__(id="completions", markup=False)
        self.items: list[Completion] = []
        self.moved = False  # the user moved the highlight since the items last changed
        self.display = False

    def show_items(self, items: list[Completion]) -> None:
        self.items = items
        self.moved = False
        self.clear_options()
        if items:
            self.add_options([Option(clean(c.label)) for c in items])  # file names
            self.highlighted = 0
        self.display = bool(items)

    def hide(self) -> None:
        self.show_items([])

    def move(self, delta: int) -> None:
        if self.items:
            self.highlighted = ((self.highlighted or 0) + delta) % len(self.items)
            self.moved = True

    def current(self) -> Completion | None:
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]


class PromptInput(TextArea):
    """Multi-line prompt with per-project history and completion."""

    @datarecord
    class Submitted(Message):
        """Enter was pressed: ``text`` is the whole prompt."""

        text: str

    def __init__(
        self,
        *,
        history: list[str] | None = None,
        completer: CompletionSource | None = None,
        completion_list: CompletionList | None = None,
        paste_image: ImagePaster | None = None,
    ) -> None:
        super().__init__(id="prompt", soft_wrap=True, tab_behavior="focus", show_line_numbers=False)
        self.prompt_history: list[str] = list(history or [])  # newest first
        self.completer = completer
        self.completion_list = completion_list
        self.paste_image = paste_image
        self.pasted_texts = PastedTexts()  # big pastes behind their placeholders (tui/paste.py)
        self.last_key_time = 0.0  # monotonic time of the last key typed here
        self._hist_index = -1
        self._draft = ""
        self._loading = False
        self.search: HistorySearch | None = None  # Ctrl+R (tui/history_search.py)

    # -- history -------------------------------------------------------------------------

    def remember(self, text: str) -> None:
        """Put a sent prompt at the front of the in-memory history."""
        if text.strip() and (not self.prompt_history or self.prompt_history[0] != text):
            self.prompt_history.insert(0, text)
        self._hist_index = -1
        self._draft = ""

    def _set_text(self, text: str) -> None:
        self._loading = True
        self.load_text(text)
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))
        self._loading = False
        self._hide_completions()

    def _history_step(self, delta: int) -> bool:
        target = self._hist_index + delta
        if target < -1 or target >= len(self.prompt_history):
            return False
        if self._hist_index == -1:
            self._draft = self.text
        self._hist_index = target
        self._set_text(self._draft if target == -1 else self.prompt_history[target])
        return True

    def _search_key(self, event: events.Key) -> bool:
        """A key while Ctrl+R searches; True when the search took it."""
        search = self.search
        if search is None:
            if event.key != "ctrl+r" or not self.prompt_history:
                return False
            self._hide_completions()
            search = self.search = HistorySearch(self.prompt_history, self.text)
        elif event.key == "ctrl+r":
            search.older()
        elif event.key == "backspace":
            search.backspace()
        elif event.key in ("enter", "tab", "escape"):
            self.search = None
            self.border_title = None
            self._set_text(search.draft if event.key == "escape" else search.shown())
            return True
        elif event.is_printable and event.character:
            search.type(event.character)
        else:  # any other key ends the search with the match taken, then does its work
            self.search = None
            self.border_title = None
            self._set_text(search.shown())
            return False
        self.border_title = search_title(search)
        self._set_text(search.shown())
        return True

    # -- completion ----------------------------------------------------------------------

    def _completion_open(self) -> bool:
        return self.completion_list is not None and bool(self.completion_list.items)

    def _hide_completions(self) -> None:
        if self.completion_list is not None and self.completion_list.items:
            self.completion_list.hide()

    def _cursor_index(self) -> int:
        row, col = self.cursor_location
        lines = self.text.split("\n")
        return sum(len(ln) + 1 for ln in lines[:row]) + col

    def refresh_completions(self) -> None:
        if self.completer is None or self.completion_list is None:
            return
        items = self.completer(self.text, self._cursor_index())
        if items == self.completion_list.items:
            return  # unchanged: keep the highlighted item where the user moved it
        self.completion_list.show_items(items)

    def accept_completion(self) -> Completion | None:
        """Replace the completed word with the highlighted item."""
        if self.completion_list is None:
            return None
        item = self.completion_list.current()
        if item is None:
            return None
        text = self.text[: item.start] + item.value + self.text[item.end :]
        self._loading = True
        self.load_text(text)
        offset = item.start + len(item.value)
        row = text.count("\n", 0, offset)
        col = offset - (text.rfind("\n", 0, offset) + 1)
        self.move_cursor((row, col))
        self._loading = False
        self._hide_completions()
        if item.value.endswith("/"):  # a directory: keep completing inside it
            self.refresh_completions()
        return item

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if not self._loading:
            self.refresh_completions()

    # -- keys ------------------------------------------------------------------------------

    def submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        self._hide_completions()
        self.post_message(self.Submitted(text))

    def _enter(self) -> None:
        """Send, take a completion, or (after a backslash) break the line.

        The list is recomputed from the text as it is now: keys that arrived faster than the
        list refreshed must not leave a stale item to be taken. A completion whose value is
        what the input already says (a full command name) sends the input as typed.
        """
        row, col = self.cursor_location
        if col > 0 and self.document.get_line(row)[col - 1] == "\\":
            self.delete((row, col - 1), (row, col))
            self.insert("\n")
            return
        self.refresh_completions()
        if not self._completion_open():
            self.submit()
            return
        assert self.completion_list is not None
        said = self.text.strip()
        if not self.completion_list.moved and any(
            c.value.strip() == said for c in self.completion_list.items
        ):
            self.submit()
            return
        item = self.accept_completion()
        if item is not None and item.value.startswith("/"):
            self.submit()

    async def _on_paste(self, event: events.Paste) -> None:
        """A big paste goes in as its placeholder (``tui/paste.py``); others as text."""
        event.text = pasted_text(event.text)  # CR line breaks as newlines, for both paths
        if self.read_only or not is_big_paste(event.text):
            return  # TextArea._on_paste (next in the MRO) inserts it
        event.stop()
        event.prevent_default()
        self.insert(self.pasted_texts.add(event.text))
        self.focus()

    async def _on_key(self, event: events.Key) -> None:
        self.last_key_time = time.monotonic()
        if self._search_key(event) or await self._own_key(event.key):
            event.stop()
            # prevent_default also keeps TextArea._on_key (next in the MRO) from running.
            event.prevent_default()

    async def _own_key(self, key: str) -> bool:
        """Act on ``key`` if the prompt has a meaning of its own for it; False leaves it to
        TextArea (typing, moving the cursor)."""
        if key == "enter":
            self._enter()
        elif key in ("ctrl+j", "shift+enter"):
            self.insert("\n")
        elif key == "tab":
            if self._completion_open():
                self.accept_completion()
        elif key in ("up", "down"):
            return self._up_down(-1 if key == "up" else 1)
        elif key == "escape" and self._completion_open():
            self._hide_completions()
        elif key == "ctrl+v" and self.paste_image is not None:
            return await self._paste_image(self.paste_image)
        else:
            return False
        return True

    def _up_down(self, delta: int) -> bool:
        """Up (-1) or Down (+1): move in the completions, else through the history from the
        first or last line; False elsewhere (the cursor moves)."""
        row = self.cursor_location[0]
        if self._completion_open():
            assert self.completion_list is not None
            self.completion_list.move(delta)
        elif delta < 0 and row == 0:
            self._history_step(+1)
        elif delta > 0 and row == self.document.line_count - 1:
            self._history_step(-1)
        else:
            return False
        return True

    async def _paste_image(self, paste_image: ImagePaster) -> bool:
        """Ctrl+V with an image on the clipboard (tui/clipboard.py); False leaves the key to
        TextArea's text paste."""
        placeholder = await paste_image()
        if placeholder:
            self.insert(placeholder)
        return placeholder is not None
