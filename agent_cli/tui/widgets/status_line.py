"""Claude Code's ``statusLine`` setting: a command fed the session as JSON, its first line shown.

``{"statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0}}``.
The command runs through ``sh -c`` in the session's cwd and environment, in a process group of
its own (``tools.hooks.process``, as a hook command does), with the JSON of
:func:`status_input` on stdin. It runs when what it would be told changes (a message, the
model, the cost: checked at each status refresh), at most one at a time and at most every
``MIN_INTERVAL_S``. Its first line of stdout is shown in a row of its own above the default
status line, colours kept and every other control sequence neutralised (``tui.safe``).

A command that fails (non-zero exit, cannot start, runs past ``timeout_s``) leaves the default
status line alone and says so once; it is tried again when its input changes. An empty line hides the row. A
project file's ``statusLine`` runs only once the folder is trusted: ``config.trust`` withholds
it from an untrusted project as it does hooks.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.text import Text
from textual.widgets import Static

from agent_cli.tui.safe import ansi_text
from tools.records import datarecord

if TYPE_CHECKING:
    from textual.timer import Timer

__all__ = [
    "MIN_INTERVAL_S",
    "CustomStatusLine",
    "StatusLineSetting",
    "display_name",
    "parse_status_line",
    "run_status_command",
    "status_input",
]

MIN_INTERVAL_S: Final[float] = 0.3  # Claude Code's "at most every 300 ms"
DEFAULT_TIMEOUT_S: Final[float] = 5.0
MAX_LINE_CHARS: Final[int] = 1000
_FAMILY = re.compile(
    r"claude-(?:(\d+)-(\d+)-)?(opus|sonnet|haiku)(?:-(\d{1,2})(?!\d)(?:-(\d{1,2})(?!\d))?)?"
)


@datarecord(frozen=True, slots=True)
class StatusLineSetting:
    """A usable ``statusLine`` value: the shell command and the extra left padding."""

    command: str
    padding: int = 0


def parse_status_line(raw: object) -> tuple[StatusLineSetting | None, str | None]:
    """``(setting, problem)`` for a ``statusLine`` value; both None when it is not set."""
    if raw is None:
        return None, None
    where = "statusLine"
    if not isinstance(raw, dict):
        return None, f"{where}: expected an object, got {type(raw).__name__}; not shown"
    if raw.get("type", "command") != "command":
        return None, f"{where}.type: only 'command' is supported, not {raw.get('type')!r}"
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, f"{where}.command: expected a non-empty string; not shown"
    padding = raw.get("padding", 0)
    if isinstance(padding, bool) or not isinstance(padding, int) or not 0 <= padding <= 40:
        return None, f"{where}.padding: expected a whole number 0-40, got {padding!r}; not shown"
    return StatusLineSetting(command, padding), None


def display_name(model: str) -> str:
    """``claude-sonnet-4-5-20250929`` -> ``Sonnet 4.5``; an unknown name as it is."""
    m = _FAMILY.search(model or "")
    if m is None:
        return model
    old_major, old_minor, family, major, minor = m.groups()
    if major is None and old_major is not None:  # claude-3-5-sonnet-...
        major, minor = old_major, old_minor
    version = f"{major}.{minor}" if major and minor else (major or "")
    return f"{family.capitalize()} {version}".strip()


def status_input(session: Any, cwd: Path) -> dict[str, Any]:
    """The JSON a status line command reads on stdin (Claude Code's fields that Nerve knows)."""
    from agent_cli import __version__

    usage = session.usage_summary()
    model = str(getattr(session, "model", "") or "")
    settings = getattr(session, "settings", None)
    project = getattr(settings, "project_root", None) or cwd
    transcript = getattr(getattr(session, "transcript", None), "path", None)
    session_cwd = getattr(session, "cwd", None) or cwd
    return {
        "hook_event_name": "Status",
        "session_id": str(getattr(session, "session_id", "")),
        "transcript_path": str(transcript) if transcript is not None else None,
        "cwd": str(session_cwd),
        "model": {"id": model, "display_name": display_name(model)},
        "workspace": {"current_dir": str(session_cwd), "project_dir": str(project)},
        "version": __version__,
        "output_style": {"name": "default"},
        "permission_mode": str(session.mode),
        "cost": {"total_cost_usd": float(usage.get("cost_usd") or 0.0)},
        "context_window": {
            "total_input_tokens": int(usage.get("input_tokens") or 0),
            "total_output_tokens": int(usage.get("output_tokens") or 0),
            "current_tokens": int(usage.get("context_tokens") or 0),
        },
        "exceeds_200k_tokens": int(usage.get("context_tokens") or 0) > 200_000,
    }


class StatusLineFailed(Exception):
    """The command failed: the message says how, for the user."""


async def run_status_command(
    setting: StatusLineSetting,
    payload: dict[str, Any],
    cwd: Path,
    env: dict[str, str],
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> str:
    """Run the command once; its first line of stdout (raw: may hold colour codes)."""
    from tools.hooks.process import run_process

    result = await run_process(
        ["sh", "-c", setting.command],
        stdin_data=json.dumps(payload).encode(),
        cwd=cwd,
        env=env,
        timeout_s=timeout_s,
    )
    if result.spawn_error is not None:
        raise StatusLineFailed(f"could not start: {result.spawn_error}")
    if result.timed_out:
        raise StatusLineFailed(f"gave no answer within {timeout_s:g} s and was stopped")
    if result.exit_code != 0:
        err = result.stderr.strip().splitlines()
        why = f": {err[-1][:200]}" if err else ""
        raise StatusLineFailed(f"exited with status {result.exit_code}{why}")
    lines = result.stdout.splitlines()
    return lines[0][:MAX_LINE_CHARS] if lines else ""


class CustomStatusLine(Static):
    """The ``statusLine`` command's row; hidden until the command prints something.

    ``attach(session)`` reads the setting; ``request()`` (each status refresh) runs the command
    when its input changed, throttled and one at a time.
    """

    DEFAULT_CSS = "CustomStatusLine { height: 1; padding: 0 1; display: none; }"

    def __init__(self, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        super().__init__("", markup=False, id="status-line")
        self.timeout_s = timeout_s
        self.setting: StatusLineSetting | None = None
        self.line = ""  # what the command printed last (neutralised, colours kept)
        self.runs = 0
        self._session: Any = None
        self._cwd = Path.cwd()
        self._warned = False
        self._shown_key: str | None = None  # input of the run on screen (or in flight)
        self._queued: tuple[str, dict[str, Any]] | None = None
        self._busy = False
        self._last_run_at = float("-inf")
        self._throttle: Timer | None = None

    def attach(self, session: Any, cwd: Path) -> str | None:
        """Use ``session``'s ``statusLine`` setting; the problem with it, if any, to show."""
        settings = getattr(session, "settings", None)
        merged = getattr(settings, "merged", None)
        extras = merged.extras() if merged is not None and hasattr(merged, "extras") else {}
        self.setting, problem = parse_status_line(extras.get("statusLine"))
        # the session's own directory: with --worktree it is not the app's
        self._session, self._cwd = session, Path(getattr(session, "cwd", None) or cwd)
        self._shown_key = None
        return problem

    @property
    def idle(self) -> bool:
        """No run under way or waiting."""
        return not self._busy and self._queued is None and self._throttle is None

    def request(self) -> None:
        """The session may have changed: run the command if its input did (throttled)."""
        if self.setting is None or self._session is None:
            return
        try:
            payload = status_input(self._session, self._cwd)
        except Exception:  # a status line never takes the app down; the default still shows
            return
        messages = getattr(getattr(self._session, "loop", None), "messages", ())
        key = json.dumps(payload, sort_keys=True) + f"#{len(messages)}"
        if key == self._shown_key or (self._queued is not None and self._queued[0] == key):
            return
        self._queued = (key, payload)
        self._schedule()

    def _schedule(self) -> None:
        if self._busy or self._throttle is not None or self._queued is None:
            return
        wait = self._last_run_at + MIN_INTERVAL_S - time.monotonic()
        if wait > 0:
            self._throttle = self.set_timer(wait, self._start)
        else:
            self._start()

    def _start(self) -> None:
        self._throttle = None
        if self._queued is None or self.setting is None:
            return
        (key, payload), self._queued = self._queued, None
        self._busy = True
        self._last_run_at = time.monotonic()
        self._shown_key = key
        self.run_worker(self._run(self.setting, payload), group="status-line", exit_on_error=False)

    async def _run(self, setting: StatusLineSetting, payload: dict[str, Any]) -> None:
        options = getattr(getattr(self._session, "ctx", None), "options", None)
        env = dict(getattr(options, "environ", None) or os.environ)
        try:
            line = await run_status_command(setting, payload, self._cwd, env, self.timeout_s)
        except StatusLineFailed as exc:
            self._failed(str(exc))
        else:
            self._show(setting, line)
        finally:
            self.runs += 1
            self._busy = False
            self._schedule()

    def _show(self, setting: StatusLineSetting, raw: str) -> None:
        text = ansi_text(raw)
        self.line = text.plain
        self.display = bool(self.line.strip())
        self.update(Text(" " * setting.padding) + text)

    def _failed(self, why: str) -> None:
        self.line = ""
        self.display = False
        if not self._warned:
            self._warned = True
            say = getattr(self.app, "say", None)
            if say is not None:
                say(f"statusLine command {why}; showing the default status line.", "warning")
