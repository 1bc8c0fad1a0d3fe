"""The permission prompt: what the tool will do, why it asks, and the answers users know.

Keys: ``y``/Enter Yes (or the highlighted option), ``a`` Yes and don't ask again (only with
suggested rules), ``n``/Esc No, Tab No with feedback (an input; Enter sends), Up/Down move.
Every key is ignored for the first ``guard_s`` seconds after the prompt appears, so a burst of
typing meant for the prompt never answers it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from agent_cli.tui.guard import GuardedModal
from agent_cli.tui.notify import notify_permission
from agent_cli.tui.safe import clean, plain_text
from tools.context import PermissionAnswer, PermissionPrompt, PermissionResponse

__all__ = [
    "PermissionScreen",
    "always_label",
    "ask_in_modal",
    "describe_input",
    "fetch_domain",
    "reason_lines",
    "rules_label",
]

PREVIEW_MAX_LINES = 40


def describe_input(prompt: PermissionPrompt) -> str:
    """The exact thing the tool will act on: the command, the path, or the input as JSON."""
    data = prompt.input or {}
    for key in ("command", "file_path", "notebook_path", "path", "url", "pattern"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    try:
        return json.dumps(data, indent=2, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(data)


def reason_lines(prompt: PermissionPrompt) -> list[str]:
    """Why the engine asks: its reason, the rule and where it came from, a safety check."""
    v = prompt.verdict
    lines: list[str] = []
    if v.reason:
        lines.append(f"Why: {v.reason}")
    if v.rule is not None:
        lines.append(f"Rule: {v.rule.behavior.value} {v.rule.value} (from {v.rule.source.value})")
    if v.safety is not None:
        lines.append(f"Safety check: {v.safety.message}")
    return lines


def rules_label(prompt: PermissionPrompt) -> str:
    return ", ".join(str(r) for r in prompt.verdict.suggestions)


def fetch_domain(prompt: PermissionPrompt) -> str | None:
    """The host a WebFetch call would reach (shown, and what "allow this domain" allows)."""
    from permissions.domains import url_host

    url = (prompt.input or {}).get("url")
    return url_host(url) if prompt.tool_name == "WebFetch" and isinstance(url, str) else None


def always_label(prompt: PermissionPrompt) -> str:
    """The don't-ask-again choice: "allow this domain" for WebFetch's domain rule."""
    suggestions = prompt.verdict.suggestions
    domains = [
        r.content.removeprefix("domain:")
        for r in suggestions
        if r.tool_name == "WebFetch" and r.content and r.content.startswith("domain:")
    ]
    if domains and len(domains) == len(suggestions):
        return f"Yes, allow this domain: don't ask again for {', '.join(domains)}"
    return f"Yes, and don't ask again for {rules_label(prompt)}"


def _preview(text: str) -> RenderableType:
    lines = text.splitlines()
    more = len(lines) - PREVIEW_MAX_LINES
    out = Text()
    for line in lines[:PREVIEW_MAX_LINES]:
        style = ""
        if line.startswith("+") and not line.startswith("+++"):
            style = "green"
        elif line.startswith("-") and not line.startswith("---"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        out.append(clean(line) + "\n", style=style)
    if more > 0:
        out.append(f"… +{more} lines\n", style="dim")
    return out


class PermissionScreen(GuardedModal[PermissionResponse]):
    """Asks whether one tool call may run; dismisses with a PermissionResponse."""

    BINDINGS = [
        Binding("y", "answer('yes')", show=False),
        Binding("enter", "choose", show=False),
        Binding("a", "answer('always')", show=False),
        Binding("n", "answer('no')", show=False),
        Binding("escape", "cancel", show=False),
        Binding("tab", "feedback", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
    ]

    def __init__(self, prompt: PermissionPrompt, *, guard_s: float = 0.5) -> None:
        super().__init__(guard_s=guard_s)
        self.prompt = prompt
        self._options: list[tuple[str, str]] = [("yes", "Yes")]
        if prompt.verdict.suggestions:
            self._options.append(("always", always_label(prompt)))
        self._options.append(("no", "No"))
        self._selected = 0
        self._options_view = Static("", markup=False, id="perm-options")
        self._feedback = Input(placeholder="Tell Nerve what to do differently", id="perm-feedback")

    def compose(self) -> ComposeResult:
        p = self.prompt
        title = p.title or f"{p.tool_name}"
        with Vertical(id="perm-box"):
            # The model wrote these: shown as text, never as control sequences or markup.
            yield Static(plain_text(title, style="bold"), markup=False, id="perm-title")
            yield Static(plain_text(describe_input(p)), markup=False, id="perm-command")
            if (domain := fetch_domain(p)) is not None:
                yield Static(plain_text(f"Domain: {domain}"), markup=False, id="perm-domain")
            if p.preview:
                yield Static(_preview(p.preview), markup=False, id="perm-preview")
            reasons = reason_lines(p)
            if reasons:
                why = plain_text("\n".join(reasons), style="dim")
                yield Static(why, markup=False, id="perm-why")
            yield Static(Text("Do you want to proceed?"), markup=False, id="perm-question")
            yield self._options_view
            yield self._feedback

    def on_mount(self) -> None:
        self._start_guard()
        self._feedback.display = False
        self._render_options()

    def _render_options(self) -> None:
        keys = {"yes": "y", "always": "a", "no": "n"}
        out = Text()
        for i, (kind, label) in enumerate(self._options):
            mark = "❯" if i == self._selected else " "
            out.append(
                f"{mark} {i + 1}. {clean(label)}  ({keys[kind]})\n",
                style="bold" if i == self._selected else "",
            )
        out.append("  Tab: No, and tell Nerve what to do differently", style="dim")
        self._options_view.update(out)

    def _response(self, kind: str, feedback: str | None = None) -> PermissionResponse:
        if kind == "yes":
            return PermissionResponse(PermissionAnswer.ALLOW)
        if kind == "always":
            return PermissionResponse(
                PermissionAnswer.ALLOW_ALWAYS, rules=tuple(self.prompt.verdict.suggestions)
            )
        return PermissionResponse(PermissionAnswer.DENY, feedback=feedback or None)

    def action_answer(self, kind: str) -> None:
        if self._guarded() or self._feedback.has_focus:
            return
        if kind == "always" and not self.prompt.verdict.suggestions:
            return
        self.dismiss(self._response(kind))

    def action_cancel(self) -> None:
        """Esc: No, also from inside the feedback field."""
        if self._guarded():
            return
        self.dismiss(self._response("no"))

    def action_choose(self) -> None:
        if self._guarded() or self._feedback.has_focus:
            return
        self.dismiss(self._response(self._options[self._selected][0]))

    def action_move(self, delta: int) -> None:
        if self._guarded():
            return
        self._selected = (self._selected + delta) % len(self._options)
        self._render_options()

    def action_feedback(self) -> None:
        if self._guarded():
            return
        self._feedback.display = True
        self._feedback.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(self._response("no", event.value.strip()))


async def ask_in_modal(
    app: App[Any], prompt: PermissionPrompt, guard_s: float
) -> PermissionResponse:
    """Show ``prompt`` in a PermissionScreen over ``app`` and wait for the answer.

    Cancelling the wait dismisses the screen with a denial (the turn was interrupted).
    """
    answer: asyncio.Future[PermissionResponse] = asyncio.get_running_loop().create_future()

    def done(response: PermissionResponse | None) -> None:
        if not answer.done():
            answer.set_result(response or PermissionResponse(PermissionAnswer.DENY))

    screen = PermissionScreen(prompt, guard_s=guard_s)
    notify_permission(app, prompt.tool_name)  # Notification hooks: permission_prompt
    # push_screen + a future rather than push_screen_wait: the session may call this from a
    # task that is not a Textual worker (e.g. parallel tool execution).
    app.push_screen(screen, done)
    try:
        return await answer
    except asyncio.CancelledError:
        if screen.is_current:
            screen.dismiss(PermissionResponse(PermissionAnswer.DENY))
        raise
