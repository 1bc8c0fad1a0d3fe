"""A command holding control characters, escape sequences or invisible Unicode characters (issue
32, item 5): what a terminal shows of it is not what runs (``git status\\x1b[2K\\r`` hides a
``touch``; U+202E reverses what follows), so it always asks a human, whatever rule would allow
what it looks like, and never comes with a "don't ask again" suggestion; only
bypassPermissions lets it through, as it lets through every ask it may."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.bash.assess import _CONTROL_RE
from permissions.engine import decide
from permissions.rules import make_rule
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    ReasonKind,
    ToolKind,
    Verdict,
)
from tools.terminal_text import HIDDEN_CLASS, has_hidden

HIDDEN = {
    "cr overwrites the line": "touch pwned\rgit status",
    "erase line and carriage return": "touch pwned; git status\x1b[2K\rgit status",
    "cursor up over the real command": "git status\n touch pwned\x1b[1A\x1b[2K\rgit status",
    "nul": "git status\x00touch pwned",
    "delete": "git status\x7f",
    "backspace": "git status\x08\x08\x08touch pwned",
    "c1 csi": "git status\x9b2K",
    "right-to-left override": "git status # \u202e dwp; touch pwned",
    "zero-width space": "git\u200b status",
    "first strong isolate": "git status \u2068touch pwned\u2069",
    "byte order mark": "\ufeffgit status",
    "line separator": "git status\u2028touch pwned",
    "tag characters": "git status\U000e0074\U000e006f\U000e0075\U000e0063\U000e0068",
    "lone surrogate (a raw byte)": "git status\udc9b2K",
}
# What the command looks like it is allowed by, and what it really runs.
ALLOW_WHAT_IT_LOOKS_LIKE = ("Bash(git status:*)", "Bash(git:*)", "Bash(touch:*)")


def _ctx(tmp_path: Path, mode: PermissionMode, *allow: str) -> PermissionContext:
    return PermissionContext(
        mode=mode,
        rules=tuple(make_rule(r, "allow") for r in allow),
        cwd=tmp_path,
        home=tmp_path.parent,
        bypass_available=mode is PermissionMode.BYPASS,
    )


def _decide(command: str, ctx: PermissionContext) -> Verdict:
    request = PermissionRequest("Bash", {"command": command}, ToolKind.BASH, command=command)
    return decide(request, ctx)


@pytest.mark.parametrize("command", list(HIDDEN.values()), ids=list(HIDDEN))
def test_the_analysis_asks_without_suggestions(command: str, tmp_path: Path) -> None:
    assert _CONTROL_RE.search(command)
    for allow in ((), ALLOW_WHAT_IT_LOOKS_LIKE):
        v = assess_bash(command, _ctx(tmp_path, PermissionMode.DEFAULT, *allow)).verdict
        assert v.decision is Decision.ASK, (allow, v)
        assert v.suggestions == ()
        # a safety check found on the way is named first; otherwise the hidden characters are
        assert v.kind in (ReasonKind.ANALYSIS, ReasonKind.SAFETY), v
        if v.kind is ReasonKind.ANALYSIS:
            assert "control characters or invisible Unicode characters" in v.reason


@pytest.mark.parametrize("command", list(HIDDEN.values()), ids=list(HIDDEN))
@pytest.mark.parametrize("mode", list(PermissionMode), ids=[m.value for m in PermissionMode])
def test_no_mode_but_bypass_lets_it_through_and_none_suggests_a_rule(
    command: str, mode: PermissionMode, tmp_path: Path
) -> None:
    v = _decide(command, _ctx(tmp_path, mode, *ALLOW_WHAT_IT_LOOKS_LIKE))
    assert v.suggestions == ()
    if mode is PermissionMode.BYPASS:
        assert v.decision is Decision.ALLOW
    elif mode in (PermissionMode.DONT_ASK, PermissionMode.PLAN):
        assert v.decision is Decision.DENY  # what would ask is refused in these modes
    else:
        assert v.decision is Decision.ASK  # auto: the classifier reviews it, never a rule


def test_the_same_command_without_the_hidden_characters_is_allowed(tmp_path: Path) -> None:
    """The control: the rules above do allow what the commands look like."""
    ctx = _ctx(tmp_path, PermissionMode.DEFAULT, *ALLOW_WHAT_IT_LOOKS_LIKE)
    assert _decide("git status", ctx).decision is Decision.ALLOW
    v = assess_bash("touch pwned", _ctx(tmp_path, PermissionMode.DEFAULT)).verdict
    assert v.decision is Decision.ASK and v.suggestions  # an ordinary ask does suggest


def test_tab_newline_and_ordinary_unicode_are_not_flagged(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, PermissionMode.DEFAULT)
    for command in ("git status\n\tgit log", "echo 'héllo wörld ✓ 日本'", "echo a\xa0b"):
        assert not _CONTROL_RE.search(command), command
    assert assess_bash("git status\n\tgit log", ctx).verdict.decision is Decision.ALLOW


def test_the_engine_flags_exactly_what_the_prompt_reveals() -> None:
    """``_CONTROL_RE`` (permissions/ imports nothing of tools/) is the class
    ``tools.terminal_text.reveal`` escapes: every control character but tab and newline, lone
    surrogates, every format character and line/paragraph separator; nothing else but
    format characters of a newer Unicode than this Python's."""
    assert _CONTROL_RE.pattern == f"[{HIDDEN_CLASS}]"
    categories = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        flagged = _CONTROL_RE.match(ch) is not None
        assert flagged == has_hidden(ch), hex(code)
        category = unicodedata.category(ch)
        if category in categories and ch not in "\t\n":
            assert flagged, hex(code)
        elif flagged:
            assert category == "Cn", hex(code)  # assigned Cf in a later Unicode
