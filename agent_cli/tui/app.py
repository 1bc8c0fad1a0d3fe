"""The Nerve TUI: drives a SessionPort and renders the events it yields. No policy lives here.

The first frame comes before the session (see ``startup``); input submitted meanwhile waits in
``pending``. The permission modal and Markdown widgets are imported on first use.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message

from agent_cli.slash.registry import parse_slash
from agent_cli.transcripts.history import PromptHistory
from agent_cli.tui.banner import startup_problems_text
from agent_cli.tui.bell import ring_bell
from agent_cli.tui.clipboard import PastedImages, paste_clipboard_image
from agent_cli.tui.completion import Completion, path_completions, slash_completions
from agent_cli.tui.idle_gc import CHECK_INTERVAL_S, IdleCollector
from agent_cli.tui.keys import KeyActions
from agent_cli.tui.labels import status_parts
from agent_cli.tui.preferences import apply_preferences
from agent_cli.tui.slash_host import (
    is_memory_note,
    run_memory_note,
    run_slash,
    slash_descriptions,
    works_without_session,
)
from agent_cli.tui.startup import SessionFactory, SessionNotReady
from agent_cli.tui.styles import APP_CSS
from agent_cli.tui.widgets.conversation import Conversation, stored_entries
from agent_cli.tui.widgets.items import NoticeLine, StatusBar, StreamStats, ToolCall, UserMessage
from agent_cli.tui.widgets.prompt_input import CompletionList, PromptInput
from agent_cli.tui.widgets.spinner import WorkingLine
from agent_cli.tui.widgets.status_line import CustomStatusLine
from agent_cli.tui.widgets.toasts import keep_toasts_above

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort
    from agent_cli.session.trust import TrustQuestion
    from agent_cli.tui.widgets.markdown import AssistantMessage
    from agent_cli.tui.widgets.settled import PartRetirer
    from tools.context import PermissionPrompt, PermissionResponse

__all__ = [
    "INTERRUPTED",
    "STARTING",
    "NerveApp",
    "SessionFactory",
    "SessionNotReady",
]

STARTING = "starting…"
INTERRUPTED_STOPS = frozenset({"aborted", "interrupted", "cancelled"})
INTERRUPTED = "Interrupted · What should Nerve do instead?"
LOOP_INTERRUPTED = "Interrupted by user."  # the loop's notice; the app shows INTERRUPTED once


class NerveApp(KeyActions):
    """The interactive app over ``session``, or over the session ``session_factory`` builds.

    ``typing_pause_s`` and ``guard_s`` are the keystroke guard.
    """

    CSS = APP_CSS
    AUTO_FOCUS = "#prompt"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "ctrl_c", show=False, priority=True),
        Binding("ctrl+d", "ctrl_d", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", show=False, priority=True),
        Binding("escape", "interrupt", show=False),
        Binding("ctrl+o", "toggle_transcript", show=False, priority=True),
    ]

    def __init__(
        self,
        session: SessionPort | None = None,
        *,
        session_factory: SessionFactory | None = None,
        bypass_available: bool = False,
        cwd: Path | None = None,
        history: PromptHistory | None = None,
        typing_pause_s: float = 1.0,
        guard_s: float = 0.5,
        status_interval_s: float = 2.0,
        open_resume_picker: bool = False,
    ) -> None:
        super().__init__(session, session_factory)
        self.open_resume_picker = open_resume_picker  # `nerve -r` without an id
        self.pending: list[str] = []  # submitted before the session was ready
        self.key_arrived = 0.0  # monotonic time the terminal's last key was read (post_message)
        self.bypass_available = bypass_available
        self.cwd = cwd if cwd is not None else Path.cwd()
        self.history = history if history is not None else PromptHistory(self.cwd)
        self.typing_pause_s = typing_pause_s
        self.guard_s = guard_s
        self.status_interval_s = status_interval_s
        self.turn_running = False
        self.interrupted = False
        self.queued: list[str] = []
        self._assistant: AssistantMessage | None = None
        self._retirer: PartRetirer | None = None
        self.stream_stats = StreamStats()
        self._tool_widgets: dict[str, ToolCall] = {}
        self.call_views: dict[str, dict[str, Any]] = {}  # tool_use id -> its output's view
        self._perm_lock = asyncio.Lock()
        self._last_ctrl_d = 0.0
        self._last_ctrl_c = 0.0
        self._last_escape = 0.0
        self.said: set[str] = set()
        self.rejections: dict[str, str] = {}  # tool_use_id -> the user's feedback ("" if none)
        self.completion_list = CompletionList()
        self.conversation = Conversation()
        self.working = WorkingLine()
        self.transcript_full = False  # Ctrl+O: every result expanded, the model's text shown
        self.status = StatusBar()
        self.pasted_images = PastedImages()  # Ctrl+V images until a prompt sends them
        self.status_line = CustomStatusLine()  # the statusLine setting's command, if any
        self.idle_gc = IdleCollector(
            lambda: self.prompt_input.last_key_time, lambda: self.turn_running
        )
        self.prompt_input = PromptInput(
            history=self.history.entries(),
            completer=self._complete,
            completion_list=self.completion_list,
            paste_image=lambda: paste_clipboard_image(self),
        )

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.conversation
        yield self.working
        yield self.completion_list
        yield self.prompt_input
        yield self.status_line
        yield self.status

    async def on_mount(self) -> None:
        self.say(
            f"✻ Welcome to Nerve  ·  {self.cwd}\n"
            "/help for commands · Shift+Tab to change mode · Ctrl+D twice to exit"
        )
        if self.session_ready:
            self._attach_handlers(self.session)
        keep_toasts_above(self.screen, self.prompt_input)
        self.refresh_status()
        self.set_interval(self.status_interval_s, self.refresh_status)
        self.idle_gc.install()  # full collections between keystrokes (tui/idle_gc.py)
        self.set_interval(CHECK_INTERVAL_S, self.idle_gc.tick)
        # The rest (building the session, the SDK) waits, so nothing competes with the paint.
        self.call_after_refresh(self.after_first_frame)

    async def on_unmount(self) -> None:
        self.idle_gc.uninstall()
        await self.close_session()

    async def session_started(self, session: SessionPort) -> None:
        self._attach_handlers(session)
        self.refresh_status()
        if (banner := startup_problems_text(session)) is not None:
            self.say(banner, "warning")
        restored = getattr(session, "restored_messages", None)
        messages = restored() if callable(restored) else []
        if messages:  # `nerve -c` / `nerve -r ID`: show where the conversation was
            await self.conversation.load(stored_entries(self, messages))
            self.say(f"Resumed session {session.session_id}.")
        elif self.open_resume_picker:
            await run_slash(self, "resume", "")
        pending_of = getattr(session, "pending_mcp_servers", None)
        if callable(pending_of) and pending_of():  # a project .mcp.json nobody approved yet
            self.run_worker(self._ask_mcp_approval(), group="mcp-approval")
        pending, self.pending = self.pending, []
        for text in pending:
            await self._dispatch(text)

    def session_failed(self, message: str) -> None:
        self.say(f"Could not start the session: {message}", "error")
        if self.pending:
            n = len(self.pending)
            self.say(f"{n} queued input{'s' if n != 1 else ''} not sent.", "warning")
            self.pending = []
        self.say("Fix the problem and start nerve again; /exit quits.")
        self.refresh_status()

    def _complete(self, text: str, cursor: int) -> list[Completion]:
        if text.startswith("/"):
            return slash_completions(text, slash_descriptions(self))
        return path_completions(self.cwd, text, cursor)

    # -- output helpers ------------------------------------------------------------------

    def composing(self) -> bool:
        """Whether the user is typing a draft: a key in the last second and text in the input
        (the Enter that sent the prompt is not typing). A streamed answer is then appended
        after each key (``markdown.append_pause``)."""
        return self.idle_gc.typing() and self.prompt_input.document.end != (0, 0)

    def post_message(self, message: Message) -> bool:
        # The driver's thread posts each key as it reads it: an append about to start waits
        # for that key's echo even before the key is handled (markdown.key_defer).
        if isinstance(message, events.Key):
            self.key_arrived = time.monotonic()
        return super().post_message(message)

    def say(self, text: str, level: str = "info") -> None:
        """Add a notice line to the conversation."""
        self.conversation.mount(NoticeLine(text, level))

    def refresh_status(self) -> None:
        if not self.session_ready:
            failed = self.startup_error is not None
            self.status.show("session failed to start · /exit to quit" if failed else STARTING)
            return
        try:
            usage = self.session.usage_summary()
            running = sum(1 for t in self.session.background_tasks() if t.status == "running")
            parts = status_parts(self.session.mode, self.session.model, usage, running)
        except Exception as exc:  # a status bar must never take the app down
            parts = [("mode", f"status unavailable: {exc}")]
        self.status.show_parts(parts)
        self.status_line.request()

    # -- input ---------------------------------------------------------------------------

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        self.prompt_input.clear()
        self.prompt_input.remember(text)
        self.history.append(text)
        slash = parse_slash(text)
        if not self.session_ready and not (slash is not None and works_without_session(slash[0])):
            if self.startup_error is not None:
                self.say(f"No session: {self.startup_error} (/exit to quit)", "error")
            else:
                self.pending.append(text)
                self.say(f"Queued until the session is ready: {text.splitlines()[0][:80]}")
            return
        await self._dispatch(text)

    async def _dispatch(self, text: str) -> None:
        """Route a submitted line: a slash command, ``!shell``, or a prompt for the model.
        Big pastes are whole in what runs (``tui/paste.py``); a prompt expands in start_turn."""
        whole = self.prompt_input.pasted_texts.expand(text)
        slash = parse_slash(whole)
        if slash is not None:
            await run_slash(self, *slash)
        elif whole.startswith("!") and whole[1:].strip():
            self._run_shell(whole[1:].strip())
        elif is_memory_note(whole):
            await run_memory_note(self, whole)
        elif self.turn_running:
            self.queued.append(text)
            self.say(f"Queued: {text.splitlines()[0][:80]}")
        else:
            self.start_turn(text)

    @work(group="shell")
    async def _run_shell(self, command: str) -> None:
        widget = ToolCall("shell", f"! {command}")
        await self.conversation.add(widget)
        try:
            output = await self.session.run_shell(command)
        except Exception as exc:
            widget.finish(f"{type(exc).__name__}: {exc}", True)
            return
        widget.finish(output, False)

    # -- turns ---------------------------------------------------------------------------

    def start_turn(self, prompt: str) -> None:
        self.turn_running = True
        self.interrupted = False
        self.working.start()
        self.conversation.mount(UserMessage(prompt))  # as typed: a big paste's placeholder
        images = self.pasted_images.take(prompt)
        whole = self.prompt_input.pasted_texts.expand(prompt)
        run = self.session.run_turn
        self._turn_worker(run(whole, images=images) if images else run(whole))

    def run_events(self, events: Any) -> None:
        """Render a session operation's events like a turn's (``/compact``): the UI stays
        responsive and Esc interrupts it."""
        self.turn_running = True
        self.interrupted = False
        self.working.start()
        self._turn_worker(events)

    @work(group="turn")
    async def _turn_worker(self, events: Any) -> None:
        self._assistant = None
        self._tool_widgets = {}
        try:
            async for event in events:
                await self.handle_event(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.say(f"Error: {type(exc).__name__}: {exc}", "error")
        finally:
            await self._end_text()
            if self.interrupted:
                for widget in self._tool_widgets.values():
                    widget.interrupt()
            self.turn_running = False
            self.working.stop()
            self.refresh_status()
            if self.queued:
                self.call_later(self.start_turn, self.queued.pop(0))
            elif not self.interrupted:
                ring_bell(self)  # now it waits for the user

    async def _new_assistant(self, fence: Any) -> None:
        from agent_cli.tui.widgets.markdown import AssistantMessage

        if fence is None:  # a new answer: its finished parts go to a new SettledParts
            from agent_cli.tui.widgets.settled import PartRetirer

            self._retirer = PartRetirer(self.conversation)
        self._assistant = AssistantMessage(
            stats=self.stream_stats,
            fence=fence,
            typing=self.composing,
            # a key read but not yet handled counts too: its echo comes first
            last_key=lambda: max(self.key_arrived, self.prompt_input.last_key_time),
        )
        await self.conversation.add(self._assistant)

    async def _end_text(self) -> None:
        assistant, self._assistant = self._assistant, None
        if assistant is not None:
            await assistant.finish()
        if self._retirer is not None:
            await self._retirer.wait()

    async def handle_event(self, event: Any) -> None:
        """Render one agent event in place."""
        # Imported here, not at the top: the event classes cost ~10 ms the first frame can skip.
        from agent_cli.loop.events import (
            CompactProgress,
            ErrorEvent,
            Notice,
            PermissionDecided,
            TextDelta,
            TurnFinished,
        )
        from agent_cli.tui.tool_view import show_tool_event
        from agent_cli.tui.widgets.thinking import show_thinking_event

        if await show_tool_event(self, event) or await show_thinking_event(self, event):
            return
        if isinstance(event, TextDelta):
            if self.interrupted:
                return
            text = event.text
            self.working.streamed(len(text))
            if self._assistant is None:
                await self._new_assistant(None)
            a = self._assistant
            assert a is not None
            cut = a.split(text)
            if cut is not None:
                # A long answer continues in a fresh widget (tui/stream_split.py), so each
                # append re-parses a small document; the finished part joins the answer's
                # other finished parts in one widget of rendered lines (tui/settled.py).
                head, text = cut
                a.feed(head)
                assert self._retirer is not None
                self._retirer.retire(a, a.separator)
                await self._new_assistant(a.fence)
            assert self._assistant is not None
            self._assistant.feed(text)
        elif isinstance(event, PermissionDecided):
            w = self._tool_widgets.get(event.tool_use_id)
            if w is not None and event.decision == "deny":
                w.note(f"Denied: {event.reason}")
        elif isinstance(event, Notice):
            if event.text == LOOP_INTERRUPTED:
                self.mark_interrupted()
            elif event.text not in self.said:
                self.say(event.text, "warning" if event.level == "warning" else "info")
        elif isinstance(event, CompactProgress):
            from agent_cli.tui.widgets.compact import show_compact_progress

            await show_compact_progress(self, event)
        elif isinstance(event, ErrorEvent):
            self.say(f"Error: {event.message}", "error")
        elif isinstance(event, TurnFinished):
            await self._end_text()
            if event.stop_reason in INTERRUPTED_STOPS:
                self.mark_interrupted()
            self.refresh_status()

    def mark_interrupted(self) -> None:
        if not self.interrupted:
            self.interrupted = True
            self.say(INTERRUPTED, "warning")

    def action_toggle_transcript(self) -> None:
        from agent_cli.tui.tool_view import toggle_transcript

        toggle_transcript(self)

    # -- permission ----------------------------------------------------------------------

    async def ask_permission(self, prompt: PermissionPrompt) -> PermissionResponse:
        """The session's permission handler: wait for a pause in typing, then ask."""
        from agent_cli.tui.permission_flow import settle_answer
        from agent_cli.tui.screens.permission import ask_in_modal

        async with self._perm_lock:
            await self._typing_paused()
            with self.working.hidden():
                response, session_edits = await ask_in_modal(self, prompt, self.guard_s)
        settle_answer(self, prompt, response, session_edits=session_edits)
        return response

    def _attach_handlers(self, session: SessionPort) -> None:
        if (problem := self.status_line.attach(session, self.cwd)) is not None:
            self.say(problem, "warning")
        apply_preferences(self, session)  # theme, verbose
        session.set_permission_handler(self.ask_permission)
        set_questions = getattr(session, "set_question_handler", None)
        if set_questions is not None:
            set_questions(self.ask_questions)

    async def ask_questions(self, prompt: Any) -> Any:
        """AskUserQuestion's handler: the question modal (``agent_cli.tui.screens.question``)."""
        from agent_cli.tui.screens.question import ask_questions

        ring_bell(self)
        with self.working.hidden():
            return await ask_questions(self, prompt)

    async def _typing_paused(self) -> None:
        """Return once the user has not typed for ``typing_pause_s``: a prompt must not pop up
        under keys meant for the input."""
        while (idle := time.monotonic() - self.prompt_input.last_key_time) < self.typing_pause_s:
            await asyncio.sleep(self.typing_pause_s - idle)

    async def _ask_mcp_approval(self) -> None:
        from agent_cli.slash.mcp_approval import ask_project_servers
        from agent_cli.tui.slash_host import TuiSlashHost

        async with self._perm_lock:
            await self._typing_paused()
            await ask_project_servers(TuiSlashHost(self))

    async def resolve_trust(self, question: TrustQuestion) -> None:
        """Ask whether to trust the project folder, before the session is built; record a Yes."""
        from agent_cli.tui.screens.trust import ask_trust_in_modal, settle_trust

        async with self._perm_lock:
            await self._typing_paused()
            trusted = await ask_trust_in_modal(self, question, self.guard_s)
        if not trusted and question.message:
            self.said.add(question.message)  # the session repeats it at the first turn
        for text, level in await settle_trust(question, trusted):
            self.say(text, level)

    # -- resume --------------------------------------------------------------------------

    async def resume_session(self, session_id: str) -> None:
        try:
            messages = await self.session.resume(session_id)
        except Exception as exc:
            self.say(f"Could not resume {session_id}: {exc}", "error")
            return
        await self.conversation.load(stored_entries(self, messages))
        self.say(f"Resumed session {self.session.session_id}.")  # a copy, if another has it
        self.refresh_status()
