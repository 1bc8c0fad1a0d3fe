"""``nerve permissions check`` on a command that hides characters (issue 32, item 5), through
the real console script: the text output shows the command written out with a note, never the
raw sequences; JSON spells them as ``\\u`` escapes (the same data)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent_cli.subcommands.test_permissions_check import nerve

HIDDEN = "touch pwned #\x1b[2K\rgit status\u202e"


def test_text_output_shows_the_command_written_out(tmp_path: Path) -> None:
    r = nerve("--allow", "Bash(git status:*)", "--", HIDDEN, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "command:  touch pwned #\\x1b[2K\\rgit status\\u202e\n" in r.stdout
    assert "note:     the command contains control characters or escape sequences" in r.stdout
    assert "decision: ask" in r.stdout and "suggest:" not in r.stdout
    for raw in ("\x1b", "\r", "\u202e"):
        assert raw not in r.stdout, repr(raw)


def test_an_ordinary_command_has_no_note(tmp_path: Path) -> None:
    r = nerve("--", "touch a.txt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "command:" not in r.stdout and "note:" not in r.stdout
    assert "suggest:  Bash(touch *)" in r.stdout


def test_json_and_batch_escape_hidden_characters(tmp_path: Path) -> None:
    r = nerve("--json", "--", "echo \u202e\x7f", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "\u202e" not in r.stdout and "\x7f" not in r.stdout
    out = json.loads(r.stdout)
    assert out["decision"] == "ask" and "\u202e\x7f" in "".join(out["trace"])
    batch = tmp_path / "cases.jsonl"
    batch.write_text(json.dumps({"id": "x\u2066", "command": HIDDEN}) + "\n")
    r = nerve("--jsonl", str(batch), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "\u2066" not in r.stdout and "\x1b" not in r.stdout
    row = json.loads(r.stdout)
    assert row["id"] == "x\u2066" and row["decision"] == "ask"
