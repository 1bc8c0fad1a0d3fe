"""A real terminal (tmux) against hostile output: a Bash command and the model's own text try
to set the clipboard (OSC 52), the title (OSC 2) and clear the screen (``ESC [2J``).

tmux keeps what an application sends: with ``set-clipboard on`` an OSC 52 becomes a paste
buffer, an OSC 2 the pane title, and a screen clear wipes what the pane shows. None may happen.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.agent_cli.tui.test_tmux import REPO, SCRIPT, _wait

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

HOSTILE = (
    "printf 'before\\n\\033]52;c;cHduZWQ=\\007\\033]2;HACKED\\007"
    "\\033[31mred\\033[0m\\033[2J\\033[Hafter\\n'"
)


def test_control_sequences_from_a_command_and_the_model_change_nothing(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    scenario = {
        "turns": [
            {
                "blocks": [
                    {"type": "text", "text": "Running \u001b]2;MODELTITLE\u0007it."},
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": HOSTILE}},
                ]
            },
            {
                "match": {"tool_result_for": "t1"},
                "blocks": [{"type": "text", "text": "Done \u001b]52;c;bW9kZWw=\u0007here."}],
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
    tmux = ["tmux", "-L", f"nerve-hostile-{uuid.uuid4().hex[:8]}", "-f", "/dev/null"]
    name = "nerve"

    def tmux_out(*args: str) -> str:
        return subprocess.run([*tmux, *args], capture_output=True, text=True).stdout

    def screen() -> str:
        return tmux_out("capture-pane", "-p", "-t", name)

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
                f"{sys.executable} {SCRIPT} {scenario_path} {project}",
            ],
            check=True,
            env=env,
        )
        subprocess.run([*tmux, "set-option", "-g", "set-clipboard", "on"], check=True)
        _wait(lambda: "Welcome to Nerve" in screen(), "the first frame")
        title = tmux_out("display-message", "-p", "-t", name, "#{pane_title}")
        subprocess.run([*tmux, "send-keys", "-t", name, "-l", "run the printer"], check=True)
        subprocess.run([*tmux, "send-keys", "-t", name, "Enter"], check=True)
        _wait(lambda: "here." in screen(), "the final answer")
        text = screen()
        assert "Welcome to Nerve" in text  # the screen was not cleared
        assert "before" in text and "after" in text and "red" in text
        assert "Running it." in text and "Done here." in text
        assert tmux_out("list-buffers") == ""  # no clipboard write reached tmux
        now = tmux_out("display-message", "-p", "-t", name, "#{pane_title}")
        assert now == title and "HACKED" not in now and "MODELTITLE" not in now
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
