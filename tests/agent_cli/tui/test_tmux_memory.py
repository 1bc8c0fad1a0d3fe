"""``/memory`` in a real terminal: the app suspends, the editor gets the tty, the app comes back."""

from __future__ import annotations

from pathlib import Path

from tests.agent_cli.tui.tmux_harness import Term, needs_tmux

pytestmark = needs_tmux


def test_memory_hands_the_terminal_to_the_editor(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Notes\n")
    editor = tmp_path / "editor.sh"
    # Reads a line from the terminal: only an editor that really has the tty gets it.
    editor.write_text('#!/bin/sh\necho "EDITOR-HAS-THE-TTY"\nread line\necho "$line" >> "$1"\n')
    editor.chmod(0o755)
    term = Term(tmp_path, {"turns": []}, env={"VISUAL": None, "EDITOR": str(editor)})
    try:
        term.wait_for("Welcome to Nerve", "the first frame")
        term.wait_for_gone("starting…", "the session")
        term.keys("/memory", literal=True)
        term.keys("Escape")  # close the completion list, keep the text
        term.keys("Enter")
        term.wait_for("Open which memory file", "the picker")
        term.keys("Enter")
        term.wait_for("EDITOR-HAS-THE-TTY", "the editor on the terminal")
        term.keys("typed in the editor", literal=True)
        term.keys("Enter")
        term.wait_for("Edited", "the app back, saying the file was edited")
        assert (project / "AGENTS.md").read_text() == "# Notes\ntyped in the editor\n"
        term.keys("C-d")
        term.keys("C-d")
    finally:
        term.close()
