"""``for`` loops over literal words or globs are judged as the commands they expand to; any way
the body could give the variable another value keeps the loop asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from permissions.bash import assess_bash
from permissions.bash.parse import parse_simple_commands
from permissions.rules import make_rule
from permissions.types import Decision, PermissionContext, RuleSource

RM = "Bash(rm:*)"


def _decide(command: str, cwd: Path, deny: tuple[str, ...] = ()) -> Decision:
    rules = tuple(make_rule(r, "deny", RuleSource.CLI) for r in deny)
    ctx = PermissionContext(rules=rules, cwd=cwd, home=cwd.parent)
    return assess_bash(command, ctx).verdict.decision


ALLOWED = [
    'for f in src/*.py; do wc -l "$f"; done',
    "for f in a.txt b.txt; do cat $f; done",
    'for f in *.md docs/*.md; do head -n 3 "$f"; echo "== ${f}"; done',
    'for f in src/*.py; do grep -n TODO "$f" | head -5; done',
    "for c in ls wc; do $c -l README.md; done",
    'for d in src tests; do ls "$d"/; done',
    "for i in 1 2 3; do echo $i; done",
    'for f in src/*.py; do wc -l "$f"; done; for g in *.txt; do cat "$g"; done',
    'for x in a b; do for y in c d; do echo "$x$y"; done; done',
]

STILL_ASKING = [
    # the body gives the variable another value
    'for f in src/*.py; do f=/etc/passwd; cat "$f"; done',
    'for f in src/*.py; do read f; cat "$f"; done',
    'for f in src/*.py; do read -r f < x; cat "$f"; done',
    'for f in src/*.py; do printf -v f /etc/passwd; cat "$f"; done',
    'for f in src/*.py; do opt=-v; printf "$opt" f /etc/passwd; cat "$f"; done',
    'for f in src/*.py; do mapfile -t f < list; cat "$f"; done',
    'for f in src/*.py; do declare f=/etc/passwd; cat "$f"; done',
    'for f in src/*.py; do declare -n r=f; r=/etc/passwd; cat "$f"; done',
    'for f in src/*.py; do eval "f=/etc/passwd"; cat "$f"; done',
    'for f in src/*.py; do source ./set-f.sh; cat "$f"; done',
    'for f in src/*.py; do . ./set-f.sh; cat "$f"; done',
    'g() { f=/etc/passwd; }; for f in src/*.py; do g; cat "$f"; done',
    'for f in src/*.py; do g() { :; }; cat "$f"; done',
    'for f in src/*.py; do cat "${f:=/etc/passwd}"; done',
    'for f in src/*.py; do (( f = 1 )); cat "$f"; done',
    'for f in src/*.py; do for f in /etc/passwd; do :; done; cat "$f"; done',
    'for f in src/*.py; do unset f; cat "$f"; done',
    'for f in src/*.py; do getopts ab f; cat "$f"; done',
    'for f in src/*.py; do $cmd f; cat "$f"; done',
    'for f in src/*.py; do command read f; cat "$f"; done',
    'for f in src/*.py; do wait -p f; cat "$f"; done',
    'for c in read; do $c f; cat "$f"; done',
    # the words are not plain
    'for f in $(ls /etc); do cat "$f"; done',
    'for f in "$HOME"/.ssh/*; do cat "$f"; done',
    'for f in ~/.ssh/id_rsa; do cat "$f"; done',
    'for f in {a,/etc/passwd}; do cat "$f"; done',
    'for f; do cat "$f"; done',
    'for f in ""; do cd $f && rm -rf ./*; done',
    # the words lead outside, or are read unquoted in a way bash splits or globs again
    'for f in /etc/passwd; do cat "$f"; done',
    'for f in ../*.py; do cat "$f"; done',
    'for f in src/*.py; do cat "$f/../../../etc/passwd"; done',
    'for f in "a /etc/passwd"; do cat $f; done',
    "for f in '*'; do cat $f; done",
    "for f in src/*.py; do cat $f; done",
    "declare IFS=x; for f in x/etc/passwdx; do cat $f; done",  # unquoted, split at x
    "read IFS < y; for f in x/etc/passwdx; do cat $f; done",
    # what the body does is not read-only
    'for f in src/*.py; do rm "$f"; done',
    'for f in src/*.py; do echo x > "$f"; done',
    "for c in rm; do $c -rf src; done",
    'for f in src/*.py; do sed -i s/a/b/ "$f"; done',
]


@pytest.mark.parametrize("command", ALLOWED)
def test_read_only_loops_over_plain_words_run(command: str, tmp_path: Path) -> None:
    assert _decide(command, tmp_path) is Decision.ALLOW, command


@pytest.mark.parametrize("command", STILL_ASKING)
def test_every_unsafe_loop_still_asks(command: str, tmp_path: Path) -> None:
    assert _decide(command, tmp_path) is not Decision.ALLOW, command


def test_deny_rules_see_the_expanded_commands(tmp_path: Path) -> None:
    assert _decide("for c in rm; do $c -rf x; done", tmp_path, (RM,)) is Decision.DENY
    assert _decide('for f in a b; do rm "$f"; done', tmp_path, (RM,)) is Decision.DENY


def test_the_body_is_judged_once_per_word() -> None:
    parsed = parse_simple_commands('for f in a.txt "b c.txt" d*; do wc -l "$f"; done')
    assert [[w.shown for w in c.words] for c in parsed.commands] == [
        ["wc", "-l", "a.txt"],
        ["wc", "-l", "b c.txt"],
        ["wc", "-l", "d*"],
    ]
    assert [c.words[-1].glob for c in parsed.commands] == [False, False, True]


def test_nested_loops_have_a_budget(tmp_path: Path) -> None:
    words = " ".join(f"w{i}" for i in range(30))
    nested = f'for a in {words}; do for b in {words}; do cat "$a$b"; done; done'
    assert len(parse_simple_commands(nested).commands) < 300
    assert _decide(nested, tmp_path) is not Decision.ALLOW  # past the budget: as before


def test_unquoted_use_is_known_only_when_bash_would_keep_the_word() -> None:
    def last_word(command: str) -> str | None:
        return parse_simple_commands(command).commands[-1].words[-1].value

    assert last_word("for f in a.txt; do cat $f; done") == "a.txt"
    assert last_word('for f in a.txt; do cat "$f"; done') == "a.txt"
    assert last_word('for f in "a b"; do cat $f; done') is None  # split in two
    assert last_word("for f in '*.py'; do cat $f; done") is None  # globbed again
    assert last_word("for f in src/*.py; do cat $f; done") is None
    # A script that touches IFS may split anywhere.
    assert last_word("IFS=x; for f in ab; do cat $f; done") is None
    assert last_word('IFS=x; for f in ab; do cat "$f"; done') == "ab"
