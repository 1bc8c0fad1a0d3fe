"""``/memory`` in a real terminal: the app suspends, the editor gets the tty, the app comes back."""

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


def test_memory_hands_the_terminal_to_the_editor(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "AGENTS.md").write_text("# Notes\n")
    editor = tmp_path / "editor.sh"
    # Reads a line from the terminal: only an editor that really has the tty gets it.
    editor.write_text('#!/bin/sh\necho "EDITOR-HAS-THE-TTY"\nread line\necho "$line" >> "$1"\n')
    editor.chmod(0o755)
    scenario_path = tmp_path / "scenario.json"
    scenario_path.write_text(json.dumps({"turns": []}))
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_"))
    }
    env.pop("VISUAL", None)
    env.update(
        HOME=str(home),
        NERVE_DATA_DIR=str(tmp_path / "data"),
        NERVE_CONFIG_DIR=str(home / ".nerve"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        NERVE_POLICY_DIR=str(tmp_path / "policy"),
        NERVE_CLAUDE_POLICY_DIR=str(tmp_path / "claude-policy"),
        ANTHROPIC_API_KEY="test-key",
        PYTHONPATH=str(REPO),
        TERM="xterm-256color",
        EDITOR=str(editor),
    )
    socket = f"nerve-test-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    name = "nerve"
    command = f"{sys.executable} {SCRIPT} {scenario_path} {project}"

    def screen() -> str:
        out = subprocess.run(
            [*tmux, "capture-pane", "-p", "-t", name], capture_output=True, text=True
        )
        return out.stdout

    def keys(*args: str) -> None:
        subprocess.run([*tmux, "send-keys", "-t", name, *args], check=True)

    try:
        subprocess.run(
            [
                *tmux,
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "120",
                "-y",
                "40",
                "-c",
                str(project),
                command,
            ],
            check=True,
            env=env,
        )
        _wait(lambda: "Welcome to Nerve" in screen(), "the first frame")
        _wait(lambda: "starting…" not in screen(), "the session")
        keys("-l", "/memory")
        keys("Escape")  # close the completion list, keep the text
        keys("Enter")
        _wait(lambda: "Open which memory file" in screen(), "the picker")
        keys("Enter")
        _wait(lambda: "EDITOR-HAS-THE-TTY" in screen(), "the editor on the terminal")
        keys("-l", "typed in the editor")
        keys("Enter")
        _wait(lambda: "Edited" in screen(), "the app back, saying the file was edited")
        assert (project / "AGENTS.md").read_text() == "# Notes\ntyped in the editor\n"
        keys("C-d")
        keys("C-d")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
