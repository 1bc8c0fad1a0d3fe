"""A real terminal (tmux) against hostile output: a Bash command and the model's own text try
to set the clipboard (OSC 52), the title (OSC 2) and clear the screen (``ESC [2J``).

tmux keeps what an application sends: with ``set-clipboard on`` an OSC 52 becomes a paste
buffer, an OSC 2 the pane title, and a screen clear wipes what the pane shows. None may happen.
"""

from __future__ import annotations

from pathlib import Path

from tests.agent_cli.tui.tmux_harness import Term, needs_tmux

pytestmark = needs_tmux

HOSTILE = (
    "printf 'before\\n\\033]52;c;cHduZWQ=\\007\\033]2;HACKED\\007"
    "\\033[31mred\\033[0m\\033[2J\\033[Hafter\\n'"
)


def test_control_sequences_from_a_command_and_the_model_change_nothing(tmp_path: Path) -> None:
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
    term = Term(tmp_path, scenario, options={"set-clipboard": "on"})
    try:
        term.wait_for("Welcome to Nerve", "the first frame")
        title = term.out("display-message", "-p", "-t", term.name, "#{pane_title}")
        term.keys("run the printer", literal=True)
        term.keys("Enter")
        term.wait_for("here.", "the final answer")
        text = term.screen()
        assert "Welcome to Nerve" in text  # the screen was not cleared
        assert "before" in text and "after" in text and "red" in text
        assert "Running it." in text and "Done here." in text
        assert term.out("list-buffers") == ""  # no clipboard write reached tmux
        now = term.out("display-message", "-p", "-t", term.name, "#{pane_title}")
        assert now == title and "HACKED" not in now and "MODELTITLE" not in now
    finally:
        term.close()
