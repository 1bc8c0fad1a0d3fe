"""``nerve demo``: an offline tour of the whole pipeline, no API key needed.

The demo copies the bundled sample project (``agent_cli/frontends/demo/project``) to a temporary folder,
starts the scripted model server (``agent_cli.testing``) on 127.0.0.1 in this process, points the
real model client at it and runs a real session there: the real SDK, tools, permission engine and
transcript. Only the model is scripted (``agent_cli.frontends.demo.scenario``).

    nerve demo        the TUI, default mode: the Edit and the test command ask you
    nerve demo -p     print mode: acceptEdits plus an allow rule for the test command
    --keep            keep the temporary folder (project copy, transcript) afterwards

Isolation: the API key, base URL and model from the environment are overridden (nothing leaves
the machine), user settings and the session data dir point into the temporary folder (demo
sessions never show up in the user's history), the project copy is marked trusted there,
managed policy still applies. Exit status 0 on
success; 3 when the scripted server saw a request it did not expect.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agent_cli.frontends.demo.scenario import DEMO_PROMPT, EXTRA_TURNS, TEST_RULE, build_scenario
from tools.records import datarecord

if TYPE_CHECKING:
    from agent_cli.session.agent_session import AgentSession
    from agent_cli.testing import ScriptedServer

__all__ = [
    "DemoPrinter",
    "DemoWorkspace",
    "demo_environment",
    "make_demo_app",
    "run_demo",
    "server_problems",
]

PROJECT_SOURCE = Path(__file__).with_name("project")
DEMO_KEY = "demo-offline-no-key"
EXIT_SCRIPT_FAILED = 3
# Environment variables that could send the demo elsewhere or leak into it.
_CLEARED_ENV = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "ANTHROPIC_CUSTOM_HEADERS")


@datarecord(frozen=True)
class DemoWorkspace:
    """The temporary folder: the project copy, the data dir and empty user config dirs."""

    root: Path
    project: Path
    data: Path
    config: Path

    @classmethod
    def create(cls, source: Path = PROJECT_SOURCE) -> DemoWorkspace:
        root = Path(tempfile.mkdtemp(prefix="nerve-demo-")).resolve()
        project = root / "mathlib"
        shutil.copytree(source, project, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        data, config = root / "data", root / "config"
        for d in (data, config / "nerve", config / "claude"):
            d.mkdir(parents=True)
        return cls(root, project, data, config)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def demo_environment(base_url: str, ws: DemoWorkspace) -> Iterator[None]:
    """Point this process at the scripted server and the workspace; restore on exit."""
    saved = dict(os.environ)
    try:
        for name in _CLEARED_ENV:
            os.environ.pop(name, None)
        os.environ["ANTHROPIC_API_KEY"] = DEMO_KEY  # never the user's key: nothing leaves
        os.environ["ANTHROPIC_BASE_URL"] = base_url
        os.environ["NERVE_DATA_DIR"] = str(ws.data)
        os.environ["NERVE_CONFIG_DIR"] = str(ws.config / "nerve")
        os.environ["CLAUDE_CONFIG_DIR"] = str(ws.config / "claude")
        _trust_copy(ws.project)
        # A corporate proxy must not intercept a loopback request.
        for name in ("NO_PROXY", "no_proxy"):
            current = os.environ.get(name, "")
            os.environ[name] = ",".join(p for p in (current, "127.0.0.1", "localhost") if p)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _trust_copy(project: Path) -> None:
    """The demo's own temporary copy is trusted (in the demo's data dir): the tour shows a
    project as its owner sees it. Its settings hold only a deny rule, which applies either way."""
    from agent_cli.session.trust import TrustError, mark_trusted

    try:
        mark_trusted(project)
    except TrustError:
        pass  # still trusted in memory for this process


class DemoPrinter:
    """Renders agent events as a readable log: ``● Read(...)`` / ``  ⎿ 27 lines``."""

    def __init__(self, out: TextIO, project: Path) -> None:
        self.out = out
        self.project = project
        self._text: list[str] = []
        self._denials: dict[str, Any] = {}

    def _short(self, value: str) -> str:
        return value.replace(f"{self.project}{os.sep}", "").replace(str(self.project), ".")

    def _line(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def flush_text(self) -> None:
        body = "".join(self._text).strip()
        self._text = []
        if not body:
            return
        lines = body.splitlines()
        self._line(f"● {lines[0]}")
        for line in lines[1:]:
            self._line(f"  {line}" if line else "")
        self._line()

    def handle(self, event: Any) -> None:
        """Print one event (``agent_cli.loop.events``); unknown events are ignored."""
        from agent_cli.loop import events as ev

        if isinstance(event, ev.TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ev.ToolStarted):
            self.flush_text()
            self._line(f"● {self._short(event.header or event.name)}")
        elif isinstance(event, ev.PermissionAsked):
            self._line(f"  ? asks: {event.reason}")
        elif isinstance(event, ev.PermissionDecided):
            if event.decision == "deny":
                self._denials[event.tool_use_id] = event
        elif isinstance(event, ev.ToolFinished):
            self._finished(event)
        elif isinstance(event, ev.Notice):
            self.flush_text()
            self._line(f"  ! {event.text}")
        elif isinstance(event, ev.RetryEvent):
            self._line(f"  ! retrying in {event.delay_s:.1f}s: {event.reason}")
        elif isinstance(event, ev.ErrorEvent):
            self.flush_text()
            self._line(f"✗ error: {event.message}")
        elif isinstance(event, ev.TurnFinished):
            self.flush_text()

    def _finished(self, event: Any) -> None:
        from agent_cli.frontends.print.mode import event_to_json

        content = event.content if isinstance(event.content, str) else ""
        if not content and event.content:
            content = "\n".join(
                str(b.get("text", "")) for b in event.content if isinstance(b, dict)
            )
        denial = self._denials.pop(event.tool_use_id, None)
        if denial is not None:
            who = f"rule {denial.rule}" if denial.rule else denial.by
            self._line(f"  ⎿ denied by {who}")
            self._line(f"    the model is told: {self._short(content.strip())}")
        elif event.name == "Read" and not event.is_error:
            self._line(f"  ⎿ {len(content.splitlines())} lines")
        else:
            lines = [self._short(x) for x in content.rstrip().splitlines()]
            head = "  ⎿ error: " if event.is_error else "  ⎿ "
            shown = lines[:12]
            for i, line in enumerate(shown or [event_to_json(event).get("summary") or "(empty)"]):
                self._line(((head if i == 0 else "    ") + line).rstrip())
            if len(lines) > len(shown):
                self._line(f"    … +{len(lines) - len(shown)} lines")
        self._line()


def _intro(ws: DemoWorkspace, out: TextIO, print_mode: bool) -> None:
    print("Nerve demo: an offline tour with a scripted model (no API key, no network).", file=out)
    print(f"Sample project copied to {ws.project}", file=out)
    if print_mode:
        print(
            "Print mode: permission mode acceptEdits, allow rule "
            f"{TEST_RULE} (as with --allowedTools), and the project's deny rule Bash(rm *) "
            "from .nerve/settings.json. Any other ask would be denied.",
            file=out,
        )
        print(f"\n> {DEMO_PROMPT}\n", file=out, flush=True)


async def _print_tour(ws: DemoWorkspace, out: TextIO) -> int:
    from agent_cli.loop.events import TurnFinished
    from agent_cli.options import RunOptions
    from agent_cli.session.agent_session import AgentSession, SessionError

    options = RunOptions(
        prompt=DEMO_PROMPT,
        print_mode=True,
        permission_mode="acceptEdits",
        allowed_tools=[TEST_RULE],
    )
    try:
        session = AgentSession.create(options, cwd=ws.project, interactive=False)
    except (SessionError, ValueError) as exc:
        print(f"nerve demo: {exc}", file=sys.stderr)
        return 1
    printer = DemoPrinter(out, ws.project)
    failed = False
    try:
        async for event in session.run_turn(DEMO_PROMPT):
            printer.handle(event)
            if isinstance(event, TurnFinished):
                failed = event.is_error
    finally:
        await session.close()
    return 1 if failed else 0


def _tui_tour(ws: DemoWorkspace) -> int:
    from agent_cli.options import RunOptions
    from agent_cli.session.agent_session import AgentSession, SessionError

    try:
        session = AgentSession.create(RunOptions(), cwd=ws.project, interactive=True)
    except (SessionError, ValueError) as exc:
        print(f"nerve demo: {exc}", file=sys.stderr)
        return 1
    app = make_demo_app(session, ws.project)
    app.run()
    return int(app.return_code or 0)


def make_demo_app(session: AgentSession, project: Path, **app_options: Any) -> Any:
    """The TUI on ``session``, which starts the demo prompt as soon as it is mounted.

    ``app_options`` go to ``NerveApp`` (tests pass ``typing_pause_s=0, guard_s=0``).
    """
    from agent_cli.transcripts.history import PromptHistory
    from agent_cli.tui.app import NerveApp

    class DemoApp(NerveApp):
        async def on_mount(self) -> None:
            # Textual runs NerveApp.on_mount itself (every class's handler in the MRO, this
            # one first); calling it here too showed the welcome twice and installed its
            # timers twice. The tour starts once the base handler has run.
            self.call_later(self._start_tour)

        def _start_tour(self) -> None:
            self.say(
                "Demo: a scripted model will fix the bug in a copy of a sample project at "
                f"{project}. The Edit and the test command will ask for your permission; "
                "allow or decline as you like. rm is denied by the project's rule Bash(rm *)."
            )
            self.start_turn(DEMO_PROMPT)

    return DemoApp(
        session,
        bypass_available=session.ctx.permissions.bypass_available,
        cwd=project,
        history=PromptHistory(project),
        **app_options,
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nerve demo",
        description="An offline tour: a scripted model fixes a bug in a sample project copy.",
    )
    p.add_argument("-p", "--print", dest="print_mode", action="store_true", help="print mode")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder afterwards")
    return p


def _tui_available() -> bool:
    try:
        import agent_cli.tui.app  # noqa: F401
    except ImportError:
        return False
    return True


def server_problems(server: ScriptedServer, print_mode: bool) -> list[str]:
    """What went wrong with the script: unexpected requests, and in print mode unplayed turns."""
    problems = list(server.failures)
    left = server.unconsumed_turns()
    # The TUI user may leave early or keep typing; print mode must play the script exactly.
    if print_mode and left:
        problems.append(f"scripted server: turn(s) {left} never served")
    return problems


def run_demo(argv: Sequence[str], *, out: TextIO | None = None) -> int:
    """Run the tour; returns the exit status (see the module docstring)."""
    out = out or sys.stdout
    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as exc:  # --help, or a bad flag (argparse already printed why)
        return int(exc.code or 0)
    from agent_cli.testing import ScriptedServer

    print_mode = args.print_mode
    if not print_mode and not _tui_available():
        print("nerve demo: the interactive app is unavailable; showing print mode.", file=out)
        print_mode = True
    ws = DemoWorkspace.create()
    extra = 0 if print_mode else EXTRA_TURNS
    server = ScriptedServer(
        build_scenario(ws.project, print_mode=print_mode, extra_turns=extra)
    ).start()
    rc = 1
    try:
        if print_mode:
            _intro(ws, out, print_mode)
        with demo_environment(server.base_url, ws):
            rc = asyncio.run(_print_tour(ws, out)) if print_mode else _tui_tour(ws)
    except KeyboardInterrupt:
        rc = 130
    finally:
        server.stop()
        problems = server_problems(server, print_mode) if rc != 130 else []
        for problem in problems:
            print(f"nerve demo: {problem}", file=sys.stderr)
        if problems:
            rc = EXIT_SCRIPT_FAILED
        if args.keep:
            print(f"Kept the demo folder: {ws.root}", file=out)
        else:
            ws.remove()
            print(f"Removed the demo folder {ws.root} (use --keep to keep it).", file=out)
    return rc
