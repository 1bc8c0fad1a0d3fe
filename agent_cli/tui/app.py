"""The Nerve TUI: drives a SessionPort and renders the events it yields. No policy lives here.

``NerveApp`` lays out the widgets and holds its parts, each an object with a small interface;
its ``action_*`` methods and message handlers (which Textual looks for on the app) hand over to
them:

- ``starter`` (``startup.SessionStarter``): the session, given or built after the first frame;
- ``prompt_router`` (``prompt_router.PromptRouter``): where a sent line goes; lines sent before
  the session is ready wait there;
- ``turns`` (``turns.TurnRunner``): the running turn, its interrupt, the prompts queued after it;
- ``event_view`` (``event_view.EventView``, with ``tool_view.ToolView``): a turn's events shown;
- ``permission_flow`` (``permission_flow.PermissionFlow``): the modals that ask the user;
- ``slash_host`` (``slash_host.TuiSlashHost``): slash commands run in the app;
- ``key_actions`` (``keys.KeyActions``): Ctrl+C, Ctrl+D, Shift+Tab, Esc.

The permission modal and Markdown widgets are imported on first use.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message

from agent_cli.transcripts.history import PromptHistory
from agent_cli.tui.banner import startup_problems_text
from agent_cli.tui.clipboard import PastedImages, paste_clipboard_image
from agent_cli.tui.completion import Completion, path_completions, slash_completions
from agent_cli.tui.event_view import EventView
from agent_cli.tui.idle_gc import CHECK_INTERVAL_S, IdleCollector
from agent_cli.tui.keys import KeyActions
from agent_cli.tui.labels import status_parts
from agent_cli.tui.permission_flow import PermissionFlow
from agent_cli.tui.preferences import apply_preferences
from agent_cli.tui.prompt_router import PromptRouter
from agent_cli.tui.slash_host import TuiSlashHost
from agent_cli.tui.startup import SessionFactory, SessionStarter
from agent_cli.tui.styles import APP_CSS
from agent_cli.tui.tool_view import toggle_transcript
from agent_cli.tui.turns import TurnRunner
from agent_cli.tui.widgets.conversation import Conversation, stored_entries
from agent_cli.tui.widgets.items import NoticeLine, StatusBar, StreamStats
from agent_cli.tui.widgets.prompt_input import CompletionList, PromptInput
from agent_cli.tui.widgets.spinner import WorkingLine
from agent_cli.tui.widgets.status_line import CustomStatusLine
from agent_cli.tui.widgets.toasts import keep_toasts_above

if TYPE_CHECKING:
    from agent_cli.session.port import SessionPort

__all__ = ["STARTING", "STATUS_INTERVAL_S", "NerveApp"]

STARTING = "starting…"
STATUS_INTERVAL_S = 2.0  # how often the status bar reads the session's usage


class NerveApp(App[int]):
    """The interactive app over ``session``, or over the session ``session_factory`` builds.

    ``typing_pause_s`` and ``guard_s`` are the keystroke guard (``PermissionFlow``).
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
        open_resume_picker: bool = False,
    ) -> None:
        super().__init__()
        self.open_resume_picker = open_resume_picker  # `nerve -r` without an id
        self.bypass_available = bypass_available
        self.cwd = cwd if cwd is not None else Path.cwd()
        self.history = history if history is not None else PromptHistory(self.cwd)
        self.key_arrived = 0.0  # monotonic time the terminal's last key was read (post_message)
        self.transcript_full = False  # Ctrl+O: every result expanded, the model's text shown
        self.stream_stats = StreamStats()
        self.pasted_images = PastedImages()  # Ctrl+V images until a prompt sends them
        self._make_widgets()
        self.permission_flow = PermissionFlow(self, typing_pause_s=typing_pause_s, guard_s=guard_s)
        self.starter = SessionStarter(
            self,
            session,
            session_factory,
            started=self._session_started,
            failed=self._session_failed,
            trust=self.permission_flow.resolve_trust,
        )
        self.slash_host = TuiSlashHost(self)
        self.prompt_router = PromptRouter(self)
        self.turns = TurnRunner(self)
        self.event_view = EventView(self)
        self.key_actions = KeyActions(self)
        self.idle_gc = IdleCollector(
            lambda: self.prompt_input.last_key_time, lambda: self.turns.running
        )

    def _make_widgets(self) -> None:
        self.completion_list = CompletionList()
        self.conversation = Conversation()
        self.working = WorkingLine()
        self.status = StatusBar()
        self.status_line = CustomStatusLine()  # the statusLine setting's command, if any
        self.prompt_input = PromptInput(
            history=self.history.entries(),
            completer=self._complete,
            completion_list=self.completion_list,
            paste_image=lambda: paste_clipboard_image(self),
        )

    # -- the parts' state, read by the widgets, screens and commands -------------------------

    @property
    def session(self) -> SessionPort:
        """The running session; raises ``SessionNotReady`` while there is none."""
        return self.starter.session

    @property
    def session_ready(self) -> bool:
        return self.starter.ready

    @property
    def startup_error(self) -> str | None:
        """Why the session could not be built (None while it starts, or once it runs)."""
        return self.starter.error

    @property
    def turn_running(self) -> bool:
        return self.turns.running

    @property
    def interrupted(self) -> bool:
        """The user interrupted the running (or last) turn."""
        return self.turns.interrupted

    @property
    def call_views(self) -> dict[str, dict[str, Any]]:
        """The view fields of the outputs shown live, by tool_use id (``tui.stored_calls``)."""
        return self.event_view.tools.call_views

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
        self.set_interval(STATUS_INTERVAL_S, self.refresh_status)
        self.idle_gc.install()  # full collections between keystrokes (tui/idle_gc.py)
        self.set_interval(CHECK_INTERVAL_S, self.idle_gc.tick)
        # The rest (building the session, the SDK) waits, so nothing competes with the paint.
        self.call_after_refresh(self.starter.after_first_frame)

    async def on_unmount(self) -> None:
        self.idle_gc.uninstall()
        await self.starter.close()

    # -- keys and input: handed to the parts -----------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.key_actions.allowed(action)

    def action_ctrl_c(self) -> None:
        self.key_actions.ctrl_c()

    def action_ctrl_d(self) -> None:
        self.key_actions.ctrl_d()

    def action_cycle_mode(self) -> None:
        self.key_actions.cycle_mode()

    def action_interrupt(self) -> None:
        self.key_actions.escape()

    def action_toggle_transcript(self) -> None:
        toggle_transcript(self)

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.prompt_router.submitted(message.text)

    def post_message(self, message: Message) -> bool:
        # The driver's thread posts each key as it reads it: an append about to start waits
        # for that key's echo even before the key is handled (markdown.key_defer).
        if isinstance(message, events.Key):
            self.key_arrived = time.monotonic()
        return super().post_message(message)

    def _complete(self, text: str, cursor: int) -> list[Completion]:
        if text.startswith("/"):
            return slash_completions(text, self.slash_host.descriptions())
        return path_completions(self.cwd, text, cursor)

    # -- what the parts and the widgets share ----------------------------------------------

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

    def composing(self) -> bool:
        """Whether the user is typing a draft: a key in the last second and text in the input
        (the Enter that sent the prompt is not typing). A streamed answer is then appended
        after each key (``markdown.append_pause``)."""
        return self.idle_gc.typing() and self.prompt_input.document.end != (0, 0)

    def start_turn(self, prompt: str) -> None:
        """Send ``prompt`` to the model now (``TurnRunner.start``)."""
        self.turns.start(prompt)

    async def end_text(self) -> None:
        """Close the answer being streamed: what comes next shows below it (``EventView``)."""
        await self.event_view.end_text()

    async def resume_session(self, session_id: str) -> None:
        """Switch to the stored session ``session_id`` and show its conversation."""
        await self.slash_host.resume_session(session_id)

    # -- the session starting ----------------------------------------------------------------

    async def _session_started(self, session: SessionPort) -> None:
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
            await self.slash_host.run("resume", "")
        pending_of = getattr(session, "pending_mcp_servers", None)
        if callable(pending_of) and pending_of():  # a project .mcp.json nobody approved yet
            self.run_worker(self.permission_flow.approve_project_servers(), group="mcp-approval")
        await self.prompt_router.send_pending()

    def _session_failed(self, message: str) -> None:
        self.say(f"Could not start the session: {message}", "error")
        if dropped := self.prompt_router.drop_pending():
            self.say(f"{dropped} queued input{'s' if dropped != 1 else ''} not sent.", "warning")
        self.say("Fix the problem and start nerve again; /exit quits.")
        self.refresh_status()

    def _attach_handlers(self, session: SessionPort) -> None:
        if (problem := self.status_line.attach(session, self.cwd)) is not None:
            self.say(problem, "warning")
        apply_preferences(self, session)  # theme, verbose
        session.set_permission_handler(self.permission_flow.ask_permission)
        set_questions = getattr(session, "set_question_handler", None)
        if set_questions is not None:
            set_questions(self.permission_flow.ask_questions)
