"""One real terminal: the TUI in tmux over the real session and the scripted server."""

from __future__ import annotations

import time
from pathlib import Path

from tests.agent_cli.tui.tmux_harness import Term, needs_tmux, wait

pytestmark = needs_tmux


def test_prompt_permission_and_result_in_tmux(tmp_path: Path) -> None:
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
    term = Term(tmp_path, scenario)
    try:
        term.wait_for("Welcome to Nerve", "the first frame")
        term.keys("make the hello file", literal=True)
        term.keys("Enter")
        term.wait_for("Do you want to proceed?", "the permission prompt")
        assert "touch hello.txt" in term.screen()
        time.sleep(0.7)  # past the keystroke guard
        term.keys("y")
        term.wait_for("All finished here.", "the final answer")
        text = term.screen()
        assert "made-it" in text  # the tool's result on screen
        assert "Do you want to proceed?" not in text
        assert (term.project / "hello.txt").exists()
        term.keys("C-d")
        term.keys("C-d")
        wait(lambda: not term.alive(), "the app to exit on Ctrl+D twice", timeout=10)
    finally:
        term.close()
