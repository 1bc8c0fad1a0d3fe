"""Ctrl+R: search the prompt history backwards, as readline and Claude Code do.

Ctrl+R starts a search; what is typed then is the query and the input shows the newest
earlier prompt containing it (case-insensitive), its border "search: <query>"; Ctrl+R again
goes to the next older match; Backspace shortens the query. Enter or Tab takes the match into
the input to edit or send (Enter does not send it at once: a recalled prompt is read before it
runs), Esc puts the draft back. The history is the app's per-project prompt history, the one
Up and Down walk (``transcripts/history.py`` keeps it on disk).
"""

from __future__ import annotations

from dataclasses import field

from tools.records import datarecord

__all__ = ["HistorySearch", "search_title"]


@datarecord
class HistorySearch:
    """One search: the prompts (newest first), the query, and which match is shown."""

    prompts: list[str]
    draft: str  # the input before the search, put back by Esc
    query: str = ""
    position: int = -1  # index in ``prompts`` of the match shown, -1 for none
    failed: bool = False  # the last step found nothing (the match shown stays)
    _seen: set[str] = field(default_factory=set)

    def _find(self, start: int) -> int:
        needle = self.query.casefold()
        for i in range(max(start, 0), len(self.prompts)):
            text = self.prompts[i]
            if needle in text.casefold() and text not in self._seen:
                return i
        return -1

    def _go(self, start: int) -> None:
        found = self._find(start)
        self.failed = found == -1
        if found != -1:
            self.position = found
            self._seen.add(self.prompts[found])

    def type(self, text: str) -> None:
        """The query grows: the newest match from the top."""
        self.query += text
        self._seen.clear()
        self._go(0)

    def backspace(self) -> None:
        self.query = self.query[:-1]
        self._seen.clear()
        self._go(0)

    def older(self) -> None:
        """Ctrl+R again: the next older match (the same prompt is not shown twice)."""
        self._go(self.position + 1)

    @property
    def match(self) -> str | None:
        if self.position == -1 or not self.query:
            return None
        return self.prompts[self.position]

    def shown(self) -> str:
        """What the input shows now: the match, or the draft while nothing matches."""
        match = self.match
        return self.draft if match is None else match


def search_title(search: HistorySearch) -> str:
    """The input's border title while searching."""
    label = "failing search" if search.failed and search.query else "search"
    return f"{label}: {search.query}  (ctrl+r older · enter take · esc cancel)"
