"""The status line and the bell in a real terminal (tmux): the ``statusLine`` command's colours
reach the screen, its other control sequences do not; the bell reaches the terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.agent_cli.tui.tmux_harness import Term, needs_tmux, wait

pytestmark = needs_tmux


def _user_settings(tmp_path: Path, data: dict[str, Any]) -> None:
    path = tmp_path / "home" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_status_line_colours_show_and_the_bell_rings(tmp_path: Path) -> None:
    command = r"printf '\033]0;PWNED\007\033[32mGREEN-STATUS\033[0m %s\n' \"$(cat | wc -c)\""
    _user_settings(
        tmp_path,
        {
            "statusLine": {"type": "command", "command": command},
            "preferredNotifChannel": "terminal_bell",
        },
    )
    scenario = {"turns": [{"blocks": [{"type": "text", "text": "Hello from the model."}]}]}
    term = Term(tmp_path, scenario, size=(60, 20))
    try:
        term.wait_for("GREEN-STATUS", "the status line command's output")
        screen = term.screen()
        lines = screen.splitlines()
        row = next(i for i, ln in enumerate(lines) if "GREEN-STATUS" in ln)
        assert "default mode" in lines[row + 1]  # the default line right under it
        assert "$0" in lines[row + 1]  # 60 columns keep the cost
        coloured = term.out("capture-pane", "-p", "-e", "-t", term.name)
        # its colour reached the terminal: the word is drawn in another colour than the rest
        found = re.search(r"((?:\x1b\[[0-9;]*m)+)GREEN-STATUS((?:\x1b\[[0-9;]*m)+) ", coloured)
        assert found is not None, coloured
        assert "38;" in found.group(1) and found.group(1) != found.group(2)
        assert "PWNED" not in term.out("display-message", "-p", "-t", term.name, "#{pane_title}")
        assert (
            term.out("display-message", "-p", "-t", term.name, "#{window_bell_flag}").strip() == "0"
        )
        term.keys("hello", literal=True)
        term.keys("Enter")
        term.wait_for("Hello from the model.", "the answer")
        wait(
            lambda: (
                term.out("display-message", "-p", "-t", term.name, "#{window_bell_flag}").strip()
                == "1"
            ),
            "the bell after the turn",
        )
    finally:
        term.close()


def test_the_ctrl_d_toast_leaves_the_input_whole(tmp_path: Path) -> None:
    term = Term(tmp_path, {"turns": []}, size=(80, 24))
    try:
        term.wait_for("Welcome to Nerve", "the first frame")
        term.keys("C-d")
        term.wait_for("Press Ctrl+D again to exit", "the toast")
        lines = term.screen().splitlines()
        top = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("╭"))
        bottom = next(i for i in range(top + 1, len(lines)) if lines[i].lstrip().startswith("╰"))
        toast = next(i for i, ln in enumerate(lines) if "Press Ctrl+D again" in ln)
        assert toast < top, "\n".join(lines)  # above the input, not over it
        for border in (lines[top], lines[bottom]):  # both borders drawn end to end
            assert border.strip()[1:-1].strip("─") == "", border
            assert border.rstrip().endswith(("╮", "╯")), border
        for inside in lines[top + 1 : bottom]:
            assert inside.rstrip().endswith("│"), inside
    finally:
        term.close()
