"""``reveal``: what is about to run shown with every hidden character written out (issue 32,
item 5), where ``neutralize`` tidies output away; ``hidden_note`` and ``json_safe``."""

from __future__ import annotations

import json
import unicodedata

from tools.terminal_text import has_hidden, hidden_note, json_safe, neutralize, reveal


def test_controls_and_sequences_are_written_out() -> None:
    command = "git status\x1b[2K\r\x1b[1Atouch pwned\x00\x7f\x08\x9b"
    assert reveal(command) == "git status\\x1b[2K\\r\\x1b[1Atouch pwned\\x00\\x7f\\x08\\x9b"
    # neutralize (for output) removes the sequences: the reason a command must not use it
    assert "\\x1b" not in neutralize(command)


def test_invisible_unicode_is_written_out() -> None:
    assert reveal("a\u202eb\u200bc\u2066d\u2069e\ufeff") == (
        "a\\u202eb\\u200bc\\u2066d\\u2069e\\ufeff"
    )
    assert reveal("tag\U000e0041") == "tag\\U000e0041"
    assert reveal("raw byte \udc9b") == "raw byte \\udc9b"


def test_newlines_tabs_and_ordinary_text_stay() -> None:
    for text in ("for f in *; do\n\techo $f\ndone", "héllo ✓ 日本 \xa0 \\x1b", ""):
        assert reveal(text) == text and not has_hidden(text)
        assert hidden_note(text) is None


def test_every_control_and_format_character_is_hidden() -> None:
    for code in range(0x110000):
        ch = chr(code)
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf", "Cs", "Zl", "Zp") and ch not in "\t\n":
            assert has_hidden(ch), hex(code)
            assert not has_hidden(reveal(ch)), hex(code)


def test_the_note_names_what_was_found() -> None:
    controls = "control characters or escape sequences, shown as \\xNN"
    unicode = "invisible Unicode characters (bidi, zero-width), shown as \\uNNNN"
    assert hidden_note("a\rb") == controls
    assert hidden_note("a\u202eb") == unicode
    assert hidden_note("\x1b\u200b") == f"{controls} and {unicode}"


def test_json_safe_keeps_the_data() -> None:
    data = {"command": "echo \u202e\x7f\x85\U000e0041\x1b", "k\u2028": ["é"]}
    text = json_safe(json.dumps(data, ensure_ascii=False))
    assert not has_hidden(text) and "é" in text
    assert json.loads(text) == data
