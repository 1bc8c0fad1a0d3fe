"""The one sanitiser of foreign text for the terminal (``tools.terminal_text``)."""

from __future__ import annotations

import re

import pytest

from tools.terminal_text import StreamNeutralizer, has_controls, neutralize

HOSTILE = [
    "\x1b]52;c;cHduZWQ=\x07",  # clipboard, BEL-terminated
    "\x1b]52;c;cHduZWQ=\x1b\\",  # clipboard, ST-terminated
    "\x1b]0;title\x07\x1b]2;title\x1b\\",  # window title
    "\x1b]8;;https://evil.example\x1b\\text\x1b]8;;\x1b\\",  # hyperlink
    "\x9d2;c1 title\x9c",  # 8-bit OSC
    "\x1b[2J\x1b[H\x1b[3J\x1b[10;10H\x1b[1A\x1b[K",  # clear, home, move, erase
    "\x9b2J",  # 8-bit CSI
    "\x1b[?1049h\x1b[?25l\x1b[>c\x1b[6n",  # alt screen, hide cursor, queries (replies!)
    "\x1bPq#0;2;0;0;0#0~~\x1b\\",  # DCS (sixel)
    "\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\",  # APC, PM, SOS
    "\x1bc\x1b7\x1b8\x1bD\x1bM\x1b(0\x1b#8",  # reset, save/restore, index, charset, DECALN
    "bs\x08\x08 cr\r del\x7f nul\x00 vt\x0b ff\x0c",  # overwrite tricks
    "\x1b[31",  # cut mid-sequence
    "\x1b]52;c;never terminated",
    "\x1b",
]
LEFTOVER = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize("text", HOSTILE)
def test_no_control_character_survives(text: str) -> None:
    for keep_sgr in (False, True):
        out = neutralize(f"a{text}b", keep_sgr=keep_sgr)
        assert not LEFTOVER.search(out), repr(out)


def test_what_is_kept() -> None:
    assert neutralize("plain\n\ttext ünï 🙂") == "plain\n\ttext ünï 🙂"
    assert neutralize("a\r\nb\rc") == "a\nb\nc"  # no line rewrites itself
    assert neutralize("bell\x07 esc\x1b") == "bell␇ esc␛"  # shown, not obeyed
    assert neutralize("x\x85y") == "x\\x85y"  # C1 NEL
    assert neutralize("\x1b]8;;https://e.example\x1b\\click\x1b]8;;\x1b\\") == "click"
    assert not has_controls("plain") and has_controls("\x1b[0m")


def test_sgr_kept_only_when_asked_and_never_conceal() -> None:
    coloured = "\x1b[1;31mred\x1b[0m \x1b[38;5;8mgrey\x1b[38;2;1;2;3m rgb\x1b[0m"
    assert neutralize(coloured) == "red grey rgb"
    assert neutralize(coloured, keep_sgr=True) == coloured
    assert neutralize("\x1b[8mhidden\x1b[28m", keep_sgr=True) == "hidden\x1b[28m"
    assert neutralize("\x1b[1;8;32mx", keep_sgr=True) == "\x1b[1;32mx"
    assert neutralize("\x1b[?31m\x1b[4:3mx", keep_sgr=True) == "x"  # private, sub-parameters


def test_a_stream_cut_anywhere_reads_as_the_whole() -> None:
    text = "Hi \x1b]2;TITLE\x07there\r\n\x1b[31mred\x1b[0m \x1b]52;c;abc\x1b\\end\x1b[2J."
    for keep_sgr in (False, True):
        whole = neutralize(text, keep_sgr=keep_sgr)
        for cut in range(len(text) + 1):
            s = StreamNeutralizer(keep_sgr=keep_sgr)
            assert s.feed(text[:cut]) + s.feed(text[cut:]) + s.flush() == whole, cut
        pieces = StreamNeutralizer(keep_sgr=keep_sgr)
        assert "".join(pieces.feed(c) for c in text) + pieces.flush() == whole


def test_a_sequence_never_closed_is_shown_broken_at_the_end() -> None:
    s = StreamNeutralizer()
    assert s.feed("ok \x1b]52;c;") == "ok "
    assert s.feed("abc") == ""
    assert s.flush() == "␛]52;c;abc"
