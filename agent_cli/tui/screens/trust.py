"""The folder-trust prompt: shown once per untrusted project whose settings would grant something.

Keys: ``y`` Yes, trust this folder; ``n``/Esc No; Enter the highlighted option (No at first: a
stray Enter must not grant anything); Up/Down move. As in the permission prompt, every key is
ignored for the first ``guard_s`` seconds, so typing meant for the prompt never answers it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from agent_cli.session.trust import TrustError, TrustQuestion, mark_trusted
from agent_cli.tui.safe import plain_text
from agent_cli.tui.screens.guard import GuardedModal

__all__ = ["TrustScreen", "ask_trust_in_modal", "settle_trust"]

_OPTIONS: tuple[tuple[bool, str, str], ...] = (
    (True, "Yes, trust this folder", "y"),
    (False, "No, continue without these settings", "n"),
)


class TrustScreen(GuardedModal[bool]):
    """Asks whether the project's settings may apply; dismisses with ``True`` to trust."""

    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen #trust-root { margin: 1 0 0 0; padding: 0 1; background: $boost; }
    TrustScreen #trust-why { margin: 1 0 0 0; }
    TrustScreen #trust-options { margin: 1 0 0 0; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", show=False),
        Binding("n", "answer(False)", show=False),
        Binding("escape", "answer(False)", show=False),
        Binding("enter", "choose", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
    ]

    def __init__(self, question: TrustQuestion, *, guard_s: float = 0.5) -> None:
        super().__init__(guard_s=guard_s)
        self.question = question
        self._selected = 1  # "No": fail closed on a stray Enter
        self._options_view = Static("", markup=False, id="trust-options")

    def compose(self) -> ComposeResult:
        q = self.question
        with Vertical(id="perm-box"):
            yield Static(
                Text("Do you trust the files in this folder?", style="bold"),
                markup=False,
                id="trust-title",
            )
            yield Static(plain_text(str(q.root)), markup=False, id="trust-root")
            yield Static(
                plain_text(
                    "Project settings can allow commands, run hooks and set environment "
                    "variables. Until you trust this folder Nerve applies only their deny and "
                    "ask rules.\n"
                    f"Not applied yet: {', '.join(q.withheld)}\n"
                    f"From: {', '.join(q.files)}",
                    style="dim",
                ),
                markup=False,
                id="trust-why",
            )
            yield self._options_view

    def on_mount(self) -> None:
        self._start_guard()
        self._render_options()

    def _render_options(self) -> None:
        out = Text()
        for i, (_, label, key) in enumerate(_OPTIONS):
            mark = "❯" if i == self._selected else " "
            style = "bold" if i == self._selected else ""
            out.append(f"{mark} {i + 1}. {label}  ({key})\n", style=style)
        self._options_view.update(out)

    def action_answer(self, trust: bool) -> None:
        if not self._guarded():
            self.dismiss(trust)

    def action_choose(self) -> None:
        if not self._guarded():
            self.dismiss(_OPTIONS[self._selected][0])

    def action_move(self, delta: int) -> None:
        if self._guarded():
            return
        self._selected = (self._selected + delta) % len(_OPTIONS)
        self._render_options()


async def ask_trust_in_modal(app: App[Any], question: TrustQuestion, guard_s: float) -> bool:
    """Show ``question`` in a TrustScreen over ``app``; ``True`` if the user trusts the folder.

    Cancelling the wait dismisses the screen as a No.
    """
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def done(trusted: bool | None) -> None:
        if not answer.done():
            answer.set_result(bool(trusted))

    screen = TrustScreen(question, guard_s=guard_s)
    app.push_screen(screen, done)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_current:
            screen.dismiss(False)
        raise


async def settle_trust(question: TrustQuestion, trusted: bool) -> list[tuple[str, str]]:
    """Record a Yes (in a thread: it writes a file); the notices to show, as (text, level)."""
    if not trusted:
        return [(question.message, "warning")] if question.message else []
    try:
        await asyncio.get_running_loop().run_in_executor(None, mark_trusted, question.root)
    except TrustError as exc:
        return [(f"{exc}; trusted for this session only", "warning")]
    return [(f"Trusted {question.root}: its project settings apply.", "info")]
