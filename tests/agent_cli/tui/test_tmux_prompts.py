"""Permission prompts in a real terminal: No ends the turn; Tab + feedback continues it."""

from __future__ import annotations

import time
from pathlib import Path

from tests.agent_cli.tui.tmux_harness import Term, needs_tmux

pytestmark = needs_tmux

GUARD_S = 0.7  # past the prompt's keystroke guard


def _bash(tool_id: str, command: str) -> dict[str, object]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}


def test_no_ends_the_turn_and_feedback_continues_it(tmp_path: Path) -> None:
    scenario = {
        "turns": [
            {"blocks": [_bash("t1", "touch first.txt")]},
            # Served only after the user's next prompt: a rejection does not ask the model.
            {"match": {"contains_text": "try the second"}, "blocks": [_bash("t2", "touch b.txt")]},
            {
                "match": {"contains_text": "name it c.txt"},
                "blocks": [{"type": "text", "text": "Understood, c.txt it is."}],
            },
        ]
    }
    term = Term(tmp_path, scenario)
    try:
        term.wait_for("Welcome to Nerve", "the first frame")
        term.keys("make the first file", literal=True)
        term.keys("Enter")
        term.wait_for("Do you want to proceed?", "the first prompt")
        time.sleep(GUARD_S)
        term.keys("n")
        term.wait_for("Interrupted · What should Nerve do instead?", "the turn to end")
        term.wait_for("Rejected", "the rejected call's line")  # rendered just after the notice
        screen = term.screen()
        assert screen.count("Interrupted") == 1 and "Interrupted by user" not in screen
        assert "Rejected" in screen and "doesn't want to proceed" not in screen
        term.keys("try the second", literal=True)  # the input has the keys again
        term.keys("Enter")
        term.wait_for("touch b.txt", "the second prompt")
        term.wait_for("Do you want to proceed?", "the second prompt")
        time.sleep(GUARD_S)
        term.keys("Tab")
        term.keys("name it c.txt", literal=True)
        term.keys("Enter")
        term.wait_for("Understood, c.txt it is.", "the model's answer to the feedback")
        term.wait_for("Rejected: name it c.txt", "the rejected call with the feedback")
        assert term.screen().count("Interrupted") == 1
        assert not (term.project / "first.txt").exists()
        assert not (term.project / "b.txt").exists()
    finally:
        term.close()
