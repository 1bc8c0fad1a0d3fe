"""Input keys in a real terminal: the TUI in tmux over the real session and the scripted server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_cli.tui.tmux_harness import Term, needs_tmux, wait

pytestmark = needs_tmux


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Term]:
    t = Term(tmp_path, {"turns": [{"blocks": [{"type": "text", "text": "unused"}]}]})
    try:
        wait(lambda: "Welcome to Nerve" in t.screen(), "the first frame")
        yield t
    finally:
        t.close()


def test_ctrl_d_with_a_draft_does_not_exit(term: Term) -> None:
    term.keys("keep this draft", literal=True)
    wait(lambda: "keep this draft" in term.screen(), "the draft echoed")
    term.keys("C-d")
    term.keys("C-d")
    time.sleep(1.5)  # longer than the double-press window: an exit would have happened
    assert term.alive() and "keep this draft" in term.screen()
    term.keys("C-c")  # clears the draft
    wait(lambda: "keep this draft" not in term.screen(), "the draft cleared")
    term.keys("C-d")
    term.keys("C-d")
    wait(lambda: not term.alive(), "the app to exit on Ctrl+D twice on an empty input", 10)


def test_slash_pause_then_fast_burst_runs_the_typed_command(term: Term) -> None:
    term.keys("/", literal=True)
    wait(lambda: "/clear" in term.screen(), "the slash menu")
    time.sleep(0.5)  # the pause: the menu shows its first item highlighted
    term.keys("c", "o", "s", "t", "Enter")  # one burst: letters and Enter in one write
    wait(lambda: "tokens · output" in term.screen(), "/cost's report")
    assert "Started a new conversation." not in term.screen()


def test_a_10000_line_bracketed_paste_is_one_placeholder_and_sent_whole(tmp_path: Path) -> None:
    import json

    lines = [f"pasted line {i}" for i in range(10_000)]
    t = Term(tmp_path, {"turns": [{"blocks": [{"type": "text", "text": "Got all of it."}]}]})
    try:
        wait(lambda: "Welcome to Nerve" in t.screen(), "the first frame")
        buffer = tmp_path / "paste.txt"
        buffer.write_text("\n".join(lines) + "\n")
        t.out("load-buffer", str(buffer))
        t.out("paste-buffer", "-p", "-t", t.name)  # -p: as a bracketed paste
        t.wait_for("[Pasted text #1 +10000 lines]", "the placeholder in the input")
        assert "pasted line 5" not in t.screen()  # not echoed into the input or the log
        t.keys("Enter")
        t.wait_for("Got all of it.", "the answer")
        screen = t.screen()
        assert "> [Pasted text #1 +10000 lines]" in screen and "pasted line 9" not in screen
    finally:
        t.close()
    sent = [
        rec
        for path in (tmp_path / "data").rglob("*.jsonl")
        for rec in map(json.loads, path.read_text().splitlines())
        if rec.get("type") == "user" and "pasted line 9999" in json.dumps(rec)
    ]
    assert sent, "the transcript has the prompt the model got"
    assert all(line in json.dumps(sent[0]) for line in (lines[0], lines[5000], lines[-1]))
