"""The permission prompt: what the tool will do, why it asks, and the answers users know.

Keys: ``y``/Enter Yes (or the highlighted option), ``a`` Yes and don't ask again, ``n``/Esc No,
Tab No with feedback (an input; Enter sends), Up/Down move. "Don't ask again" says what it keeps
and where: the suggested rules saved to the project's ``.claude/settings.local.json`` (Bash: the
command prefix; WebFetch: the domain; an MCP tool: the tool), or for a file edit inside the
working directories, all edits allowed for this session (accept-edits mode).
Every key is ignored for the first ``guard_s`` seconds after the prompt appears, so a burst of
typing meant for the prompt never answers it.

What the model wrote is shown *revealed* (``tools.terminal_text.reveal``): a command that hides
a second one behind a carriage return or an escape sequence shows them as ``\\r`` and
``\\x1b[2K``, with a warning line, and is never offered "don't ask again".
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

from agent_cli.tui.notify import notify_permission
from agent_cli.tui.safe import clean
from agent_cli.tui.screens.guard import GuardedModal
from permissions.types import ReasonKind
from tools.context import PermissionAnswer, PermissionPrompt, PermissionResponse
from tools.terminal_text import hidden_note, reveal

__all__ = [
    "EDIT_TOOLS",
    "LOCAL_SETTINGS_FILE",
    "PermissionScreen",
    "always_label",
    "ask_in_modal",
    "describe_input",
    "fetch_domain",
    "hidden_warning",
    "offers_session_edits",
    "reason_lines",
    "rules_label",
]

PREVIEW_MAX_LINES = 40
LOCAL_SETTINGS_FILE = ".claude/settings.local.json"  # config.local_settings_path, relative
EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})


_SUBJECT_KEYS = ("command", "file_path", "notebook_path", "path", "url", "pattern")


def _subject_key(prompt: PermissionPrompt) -> str | None:
    data = prompt.input or {}
    for key in _SUBJECT_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value:
            return key
    return None


def describe_input(prompt: PermissionPrompt) -> str:
    """The exact thing the tool will act on: the command, the path, or the input as JSON."""
    data = prompt.input or {}
    if (key := _subject_key(prompt)) is not None:
        return str(data[key])
    try:
        return json.dumps(data, indent=2, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(data)


def _strings(value: Any) -> list[str]:
    """Every string inside ``value`` (dict keys too), for a whole input shown as JSON."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def hidden_warning(prompt: PermissionPrompt) -> str | None:
    """ "This command contains control characters or escape sequences, shown as \\xNN" when
    what the call acts on (or its title) holds characters a terminal would not show as
    themselves; None when it holds none. Such a call is never offered "don't ask again"."""
    key = _subject_key(prompt)
    texts = [prompt.title]
    texts += [describe_input(prompt)] if key is not None else _strings(prompt.input or {})
    note = hidden_note("".join(texts))
    if note is None:
        return None
    what = "command" if key == "command" else "input"
    return f"This {what} contains {note}"


def reason_lines(prompt: PermissionPrompt) -> list[str]:
    """Why the engine asks: its reason, the rule and where it came from, a safety check."""
    v = prompt.verdict
    lines: list[str] = []  # shown revealed: a reason may quote the command
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


def offers_session_edits(prompt: PermissionPrompt) -> bool:
    """A file edit inside the working directories that asks only because of the mode: "allow
    all edits during this session" (accept-edits mode) is what would let it through."""
    v = prompt.verdict
    return (
        prompt.tool_name in EDIT_TOOLS
        and not v.suggestions
        and v.kind is ReasonKind.MODE
        and v.rule is None
        and v.safety is None
        and prompt.agent_id is None
    )


def _subjects(prompt: PermissionPrompt) -> list[str]:
    """What each suggested rule covers, in words: a command prefix, a domain, a tool."""
    out = []
    for r in prompt.verdict.suggestions:
        content = r.content or ""
        if r.tool_name == "Bash" and content:
            prefix = content.removesuffix(":*").removesuffix(" *").removesuffix("*").strip()
            out.append(f"`{prefix}` commands")
        elif r.tool_name == "WebFetch" and content.startswith("domain:"):
            out.append(content.removeprefix("domain:"))
        else:
            out.append(str(r))
    return out


def always_label(prompt: PermissionPrompt) -> str | None:
    """The don't-ask-again choice, and on a second line the rule it saves and where; None
    when none is offered (no rule to suggest, and not an edit this session could allow; or
    the call holds hidden characters: what the user saw is not what would be remembered)."""
    if hidden_warning(prompt) is not None:
        return None
    if prompt.verdict.suggestions:
        rules = rules_label(prompt)
        return (
            f"Yes, and don't ask again for {', '.join(_subjects(prompt))}"
            f"\nsaves {rules} to {LOCAL_SETTINGS_FILE}"
        )
    if offers_session_edits(prompt):
        return "Yes, allow all edits during this session (accept edits mode)"
    return None


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


def _shown(text: str, style: str = "") -> Text:
    """Foreign text as a ``Text`` (never markup), every hidden character written out."""
    return Text(reveal(text), style=style)


class PermissionScreen(GuardedModal[PermissionResponse]):
    """Asks whether one tool call may run; dismisses with a PermissionResponse."""

    BINDINGS = [
        Binding("y", "answer('yes')", show=False),
        Binding("enter", "choose", show=False),
        Binding("a", "answer('always')", show=False),
        Binding("n", "answer('no')", show=False),
        Binding("escape", "cancel", show=False),
        # priority: run by the app as it reads the key, before it hands on the keys after it
        Binding("tab", "feedback", show=False, priority=True),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
    ]

    def __init__(self, prompt: PermissionPrompt, *, guard_s: float = 0.5) -> None:
        super().__init__(guard_s=guard_s)
        self.prompt = prompt
        self._options: list[tuple[str, str]] = [("yes", "Yes")]
        if (always := always_label(prompt)) is not None:
            self._options.append(("always", always))
        self._options.append(("no", "No"))
        self._selected = 0
        self.session_edits = False  # "allow all edits during this session" was chosen
        self._options_view = Static("", markup=False, id="perm-options")
        self._feedback = Input(placeholder="Tell Nerve what to do differently", id="perm-feedback")

    def compose(self) -> ComposeResult:
        p = self.prompt
        title = p.title or f"{p.tool_name}"
        with Vertical(id="perm-box"):
            # The model wrote these: shown as text with every control character and invisible
            # one written out (what will run, not what it would print), never as markup.
            yield Static(_shown(title, "bold"), markup=False, id="perm-title")
            yield Static(_shown(describe_input(p)), markup=False, id="perm-command")
            if (warning := hidden_warning(p)) is not None:
                yield Static(Text(warning, style="bold red"), markup=False, id="perm-hidden")
            description = (p.input or {}).get("description")
            if p.tool_name == "Bash" and isinstance(description, str) and description.strip():
                about = _shown(description.strip(), "dim")
                yield Static(about, markup=False, id="perm-description")
            if (domain := fetch_domain(p)) is not None:
                yield Static(_shown(f"Domain: {domain}"), markup=False, id="perm-domain")
            if p.preview:
                yield Static(_preview(p.preview), markup=False, id="perm-preview")
            reasons = reason_lines(p)
            if reasons:
                why = _shown("\n".join(reasons), "dim")
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
            head, _, detail = label.partition("\n")
            out.append(
                f"{mark} {i + 1}. {clean(head)}  ({keys[kind]})\n",
                style="bold" if i == self._selected else "",
            )
            if detail:
                out.append(f"     {clean(detail)}\n", style="dim")
        out.append("  Tab: No, and tell Nerve what to do differently", style="dim")
        self._options_view.update(out)

    def _response(self, kind: str, feedback: str | None = None) -> PermissionResponse:
        if kind == "yes":
            return PermissionResponse(PermissionAnswer.ALLOW)
        if kind == "always" and not self.prompt.verdict.suggestions:
            self.session_edits = True  # the app switches to accept-edits mode
            return PermissionResponse(PermissionAnswer.ALLOW)
        if kind == "always":
            return PermissionResponse(
                PermissionAnswer.ALLOW_ALWAYS, rules=tuple(self.prompt.verdict.suggestions)
            )
        return PermissionResponse(PermissionAnswer.DENY, feedback=feedback or None)

    def _typing_feedback(self) -> bool:
        """The feedback field is open: letters and Enter belong to it, not to the options."""
        return bool(self._feedback.display)

    def action_answer(self, kind: str) -> None:
        if self._guarded() or self._typing_feedback():
            return
        if kind == "always" and all(k != "always" for k, _ in self._options):
            return
        self.dismiss(self._response(kind))

    def action_cancel(self) -> None:
        """Esc: No, also from inside the feedback field."""
        if self._guarded():
            return
        self.dismiss(self._response("no"))

    def action_choose(self) -> None:
        if self._guarded() or self._typing_feedback():
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
        # At once, not on the next tick (Widget.focus): keys read with the Tab are handed on
        # next and must reach the field, or "name it…" would answer No with its first letter.
        self.set_focus(self._feedback)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(self._response("no", event.value.strip()))


async def ask_in_modal(
    app: App[Any], prompt: PermissionPrompt, guard_s: float
) -> tuple[PermissionResponse, bool]:
    """Show ``prompt`` in a PermissionScreen over ``app`` and wait for the answer; the flag
    says the user chose "allow all edits during this session".

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
        return await answer, screen.session_edits
    except asyncio.CancelledError:
        if screen.is_current:
            screen.dismiss(PermissionResponse(PermissionAnswer.DENY))
        raise
