"""The shared setup of the tmux tests: one tmux server running the real app (``tmux_app.py``)
over the real session and the scripted server, with an isolated home and config."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

__all__ = ["REPO", "SCRIPT", "Term", "needs_tmux", "wait"]

SCRIPT = Path(__file__).with_name("tmux_app.py")
REPO = Path(__file__).resolve().parents[3]

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def wait(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Term:
    """One tmux server (its own socket) running the app against ``scenario`` in ``project``.

    ``env`` adds to (or, with a ``None`` value, removes from) the isolated environment;
    ``options`` are global tmux options set right after the session starts. ``command``
    replaces ``tmux_app.py`` (which serves ``scenario`` in its own process) with another
    command line, e.g. the real ``nerve`` against a server given in ``env``.
    """

    def __init__(
        self,
        tmp_path: Path,
        scenario: dict[str, Any],
        *,
        env: dict[str, str | None] | None = None,
        options: dict[str, str] | None = None,
        size: tuple[int, int] = (120, 40),
        command: str | None = None,
    ) -> None:
        home, self.project = tmp_path / "home", tmp_path / "project"
        home.mkdir(exist_ok=True)
        self.project.mkdir(exist_ok=True)
        scenario_path = tmp_path / "scenario.json"
        scenario_path.write_text(json.dumps(scenario))
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_"))
        }
        self.env.update(
            HOME=str(home),
            NERVE_DATA_DIR=str(tmp_path / "data"),
            NERVE_CONFIG_DIR=str(home / ".nerve"),
            CLAUDE_CONFIG_DIR=str(home / ".claude"),
            NERVE_POLICY_DIR=str(tmp_path / "policy"),
            NERVE_CLAUDE_POLICY_DIR=str(tmp_path / "claude-policy"),
            ANTHROPIC_API_KEY="test-key",
            PYTHONPATH=str(REPO),
            TERM="xterm-256color",
        )
        for key, value in (env or {}).items():
            if value is None:
                self.env.pop(key, None)
            else:
                self.env[key] = value
        self.tmux = ["tmux", "-L", f"nerve-test-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
        self.name = "nerve"
        command = command or f"{sys.executable} {SCRIPT} {scenario_path} {self.project}"
        start = ["new-session", "-d", "-s", self.name, "-x", str(size[0]), "-y", str(size[1])]
        subprocess.run(
            [*self.tmux, *start, "-c", str(self.project), command], check=True, env=self.env
        )
        for key, value in (options or {}).items():
            subprocess.run([*self.tmux, "set-option", "-g", key, value], check=True)

    def out(self, *args: str) -> str:
        """The stdout of one tmux command against this server."""
        return subprocess.run([*self.tmux, *args], capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self.out("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str, literal: bool = False) -> None:
        flag = ["-l"] if literal else []
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *flag, *keys], check=True)

    def alive(self) -> bool:
        done = subprocess.run([*self.tmux, "has-session", "-t", self.name], capture_output=True)
        return done.returncode == 0

    def wait_for(self, text: str, what: str = "", timeout: float = 20.0) -> None:
        """Wait until ``text`` is on the screen."""
        wait(lambda: text in self.screen(), what or repr(text), timeout)

    def wait_for_gone(self, text: str, what: str = "", timeout: float = 20.0) -> None:
        """Wait until ``text`` is no longer on the screen."""
        wait(lambda: text not in self.screen(), what or f"{text!r} to go", timeout)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)
