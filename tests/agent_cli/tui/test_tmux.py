"""One real terminal: the TUI in tmux over the real session and the scripted server."""

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


def test_prompt_permission_and_result_in_tmux(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    scenario = {
        "turns": [
            {
                "blocks": [
                    {"type": "text", "text": "Creating the file."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "touch hello.txt && echo made-it"},
                    },
                ]
            },
            {
                "match": {"tool_result_for": "t1"},
                "blocks": [{"type": "text", "text": "All finished here."}],
            },
        ]
    }
    scenario_path = tmp_path / "scenario.json"
    scenario_path.write_text(json.dumps(scenario))
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "NERVE_", "CLAUDE_"))
    }
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
        subprocess.run([*tmux, "send-keys", "-t", name, "-l", "make the hello file"], check=True)
        subprocess.run([*tmux, "send-keys", "-t", name, "Enter"], check=True)
        _wait(lambda: "Do you want to proceed?" in screen(), "the permission prompt")
        assert "touch hello.txt" in screen()
        time.sleep(0.7)  # past the keystroke guard
        subprocess.run([*tmux, "send-keys", "-t", name, "y"], check=True)
        _wait(lambda: "All finished here." in screen(), "the final answer")
        text = screen()
        assert "made-it" in text  # the tool's result on screen
        assert "Do you want to proceed?" not in text
        assert (project / "hello.txt").exists()
        subprocess.run([*tmux, "send-keys", "-t", name, "C-d"], check=True)
        subprocess.run([*tmux, "send-keys", "-t", name, "C-d"], check=True)
        _wait(
            lambda: (
                subprocess.run([*tmux, "has-session", "-t", name], capture_output=True).returncode
                != 0
            ),
            "the app to exit on Ctrl+D twice",
            timeout=10,
        )
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
