"""Input keys in a real terminal: the TUI in tmux over the real session and the scripted server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SCRIPT = Path(__file__).with_name("tmux_app.py")
REPO = Path(__file__).resolve().parents[3]


def _wait(check: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Term:
    """One tmux server running the real app against a scenario."""

    def __init__(self, tmp_path: Path, scenario: dict[str, object]) -> None:
        home, self.project = tmp_path / "home", tmp_path / "project"
        home.mkdir()
        self.project.mkdir()
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
        self.tmux = ["tmux", "-L", f"nerve-test-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
        self.name = "nerve"
        command = f"{sys.executable} {SCRIPT} {scenario_path} {self.project}"
        start = ["new-session", "-d", "-s", self.name, "-x", "120", "-y", "40"]
        subprocess.run(
            [*self.tmux, *start, "-c", str(self.project), command],
            check=True,
            env=self.env,
        )

    def screen(self) -> str:
        out = subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        )
        return out.stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        flag = ["-l"] if literal else []
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *flag, *keys], check=True)

    def alive(self) -> bool:
        done = subprocess.run([*self.tmux, "has-session", "-t", self.name], capture_output=True)
        return done.returncode == 0

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Term]:
    t = Term(tmp_path, {"turns": [{"blocks": [{"type": "text", "text": "unused"}]}]})
    try:
        _wait(lambda: "Welcome to Nerve" in t.screen(), "the first frame")
        yield t
    finally:
        t.close()


def test_ctrl_d_with_a_draft_does_not_exit(term: Term) -> None:
    term.keys("keep this draft", literal=True)
    _wait(lambda: "keep this draft" in term.screen(), "the draft echoed")
    term.keys("C-d")
    term.keys("C-d")
    time.sleep(1.5)  # longer than the double-press window: an exit would have happened
    assert term.alive() and "keep this draft" in term.screen()
    term.keys("C-c")  # clears the draft
    _wait(lambda: "keep this draft" not in term.screen(), "the draft cleared")
    term.keys("C-d")
    term.keys("C-d")
    _wait(lambda: not term.alive(), "the app to exit on Ctrl+D twice on an empty input", 10)


def test_slash_pause_then_fast_burst_runs_the_typed_command(term: Term) -> None:
    term.keys("/", literal=True)
    _wait(lambda: "/clear" in term.screen(), "the slash menu")
    time.sleep(0.5)  # the pause: the menu shows its first item highlighted
    term.keys("c", "o", "s", "t", "Enter")  # one burst: letters and Enter in one write
    _wait(lambda: "tokens · output" in term.screen(), "/cost's report")
    assert "Started a new conversation." not in term.screen()
